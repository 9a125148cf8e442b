package checkexe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// fixedSignature begins a VS_FIXEDFILEINFO.
const fixedSignature = 0xFEEF04BD

// VersionInfo is what an RT_VERSION resource says: the fixed file and
// product versions and the StringFileInfo strings (the last table wins
// for a key in several).
type VersionInfo struct {
	FileVersion, ProductVersion [4]uint16
	Strings                     map[string]string
}

// ParseVersionInfo decodes a VS_VERSIONINFO block.
func ParseVersionInfo(b []byte) (VersionInfo, error) {
	vi := VersionInfo{Strings: map[string]string{}}
	key, value, children, _, err := block(b)
	if err != nil {
		return vi, err
	}
	if key != "VS_VERSION_INFO" {
		return vi, fmt.Errorf("version resource key is %q, not VS_VERSION_INFO", key)
	}
	if len(value) < 52 || binary.LittleEndian.Uint32(value) != fixedSignature {
		return vi, errors.New("version resource has no VS_FIXEDFILEINFO")
	}
	ver := func(off int) [4]uint16 {
		ms, ls := binary.LittleEndian.Uint32(value[off:]), binary.LittleEndian.Uint32(value[off+4:])
		return [4]uint16{uint16(ms >> 16), uint16(ms), uint16(ls >> 16), uint16(ls)}
	}
	vi.FileVersion, vi.ProductVersion = ver(8), ver(16)
	for len(children) > 0 {
		k, _, tables, n, err := block(children)
		if err != nil {
			return vi, err
		}
		children = children[n:]
		if k != "StringFileInfo" {
			continue
		}
		for len(tables) > 0 {
			_, _, strs, tn, err := block(tables)
			if err != nil {
				return vi, err
			}
			tables = tables[tn:]
			for len(strs) > 0 {
				sk, sv, _, sn, err := block(strs)
				if err != nil {
					return vi, err
				}
				strs = strs[sn:]
				vi.Strings[sk] = strings.TrimRight(utf16String(sv), "\x00")
			}
		}
	}
	return vi, nil
}

// block decodes one version-resource block at the start of b: its key,
// value bytes, the bytes of its children, and its length padded to 32 bits
// (where the next sibling starts).
func block(b []byte) (key string, value, children []byte, next int, err error) {
	if len(b) < 6 {
		return "", nil, nil, 0, errors.New("version block truncated")
	}
	length := int(binary.LittleEndian.Uint16(b))
	valueLen := int(binary.LittleEndian.Uint16(b[2:]))
	text := binary.LittleEndian.Uint16(b[4:]) == 1
	if length < 6 || length > len(b) {
		return "", nil, nil, 0, fmt.Errorf("version block length %d out of range", length)
	}
	total := len(b)
	b = b[:length]
	i := 6
	for ; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			break
		}
	}
	if i+1 >= len(b) {
		return "", nil, nil, 0, errors.New("version block key not terminated")
	}
	key = utf16String(b[6:i])
	i = align4(i + 2)
	if text {
		valueLen *= 2 // in words for text values
	}
	if i+valueLen > len(b) {
		valueLen = len(b) - i
	}
	value = b[i : i+valueLen]
	i = align4(i + valueLen)
	if i < len(b) {
		children = b[i:]
	}
	return key, value, children, min(align4(length), total), nil
}

func align4(n int) int { return (n + 3) &^ 3 }
