package startup_test

import (
	"encoding/binary"
	"unicode/utf16"
)

// lnk builds a Shell Link whose link info names target, with arguments
// args (Unicode string data), as Windows writes one.
func lnk(target, args string) []byte {
	b := make([]byte, 0x4c)
	binary.LittleEndian.PutUint32(b, 0x4c)
	binary.LittleEndian.PutUint32(b[0x14:], 0x2|0x20|0x80)
	info := make([]byte, 28)
	base := append([]byte(target), 0)
	binary.LittleEndian.PutUint32(info[0:], uint32(len(info)+len(base)))
	binary.LittleEndian.PutUint32(info[4:], 28)
	binary.LittleEndian.PutUint32(info[8:], 1)
	binary.LittleEndian.PutUint32(info[16:], 28)
	b = append(append(b, info...), base...)
	u := utf16.Encode([]rune(args))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}
