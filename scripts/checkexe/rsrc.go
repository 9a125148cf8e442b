package checkexe

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
)

// Resource types (winuser.h RT_*).
const (
	rtIcon      = 3
	rtVersion   = 16
	rtManifest  = 24
	rtGroupIcon = 14
)

// Resource is one leaf of a PE resource tree: type, name and language
// (numeric IDs, or -1 with Name set for a named entry) and its bytes.
type Resource struct {
	Type, ID, Lang int
	Name           string
	Data           []byte
}

// Resources reads every resource of f's .rsrc section.
func Resources(f *pe.File) ([]Resource, error) {
	sec := f.Section(".rsrc")
	if sec == nil {
		return nil, errors.New("no .rsrc section")
	}
	raw, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .rsrc: %w", err)
	}
	w := walker{raw: raw, base: sec.VirtualAddress}
	var out []Resource
	err = w.dir(0, 0, Resource{}, &out)
	return out, err
}

type walker struct {
	raw  []byte
	base uint32
}

func (w walker) u16(off uint32) (uint16, error) {
	if uint64(off)+2 > uint64(len(w.raw)) {
		return 0, fmt.Errorf("resource offset %#x out of range", off)
	}
	return binary.LittleEndian.Uint16(w.raw[off:]), nil
}

func (w walker) u32(off uint32) (uint32, error) {
	if uint64(off)+4 > uint64(len(w.raw)) {
		return 0, fmt.Errorf("resource offset %#x out of range", off)
	}
	return binary.LittleEndian.Uint32(w.raw[off:]), nil
}

// dir walks the IMAGE_RESOURCE_DIRECTORY at off; level 0 is the type,
// 1 the name, 2 the language.
func (w walker) dir(off uint32, level int, cur Resource, out *[]Resource) error {
	if level > 2 {
		return errors.New("resource tree deeper than type/name/language")
	}
	named, err := w.u16(off + 12)
	if err != nil {
		return err
	}
	ids, err := w.u16(off + 14)
	if err != nil {
		return err
	}
	for i := range uint32(named) + uint32(ids) {
		e := off + 16 + 8*i
		nameField, err := w.u32(e)
		if err != nil {
			return err
		}
		target, err := w.u32(e + 4)
		if err != nil {
			return err
		}
		r := cur
		id, name := int(nameField), ""
		if nameField&0x80000000 != 0 {
			id = -1
			if name, err = w.name(nameField &^ 0x80000000); err != nil {
				return err
			}
		}
		switch level {
		case 0:
			r.Type = id
		case 1:
			r.ID, r.Name = id, name
		case 2:
			r.Lang = id
		}
		if target&0x80000000 != 0 {
			if err := w.dir(target&^0x80000000, level+1, r, out); err != nil {
				return err
			}
			continue
		}
		// IMAGE_RESOURCE_DATA_ENTRY: RVA, size, code page, reserved.
		rva, err := w.u32(target)
		if err != nil {
			return err
		}
		size, err := w.u32(target + 4)
		if err != nil {
			return err
		}
		start := uint64(rva) - uint64(w.base)
		if rva < w.base || start+uint64(size) > uint64(len(w.raw)) {
			return fmt.Errorf("resource data at RVA %#x (%d bytes) is outside .rsrc", rva, size)
		}
		r.Data = w.raw[start : start+uint64(size)]
		*out = append(*out, r)
	}
	return nil
}

// name reads an IMAGE_RESOURCE_DIR_STRING_U (length, then UTF-16).
func (w walker) name(off uint32) (string, error) {
	n, err := w.u16(off)
	if err != nil {
		return "", err
	}
	if uint64(off)+2+2*uint64(n) > uint64(len(w.raw)) {
		return "", fmt.Errorf("resource name at %#x out of range", off)
	}
	return utf16String(w.raw[off+2 : off+2+2*uint32(n)]), nil
}

// utf16String decodes little-endian UTF-16 (BMP only is enough here).
func utf16String(b []byte) string {
	rs := make([]rune, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		rs = append(rs, rune(binary.LittleEndian.Uint16(b[i:])))
	}
	return string(rs)
}
