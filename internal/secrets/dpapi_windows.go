package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// dpapiEntropy is mixed into every DPAPI blob Hearth makes, so a blob only
// decrypts for a caller that also knows it: other programs of the same user
// cannot simply call CryptUnprotectData on Hearth's files.
const dpapiEntropy = "Hearth DPAPI entropy v1"

// sealMagic starts every DPAPI-protected key file.
const sealMagic = "HEARTH-DPAPI-1\n"

// Protect encrypts plain with DPAPI for the current user
// (CryptProtectData without CRYPTPROTECT_LOCAL_MACHINE), never showing UI.
// Only the same user on the same machine (or with the same roaming
// credentials) can Unprotect the result.
func Protect(plain []byte) ([]byte, error) {
	if len(plain) == 0 {
		return nil, errors.New("dpapi protect: empty data")
	}
	in := blob(plain)
	ent := blob([]byte(dpapiEntropy))
	desc, err := windows.UTF16PtrFromString("Hearth")
	if err != nil {
		return nil, err
	}
	var out windows.DataBlob
	if err := windows.CryptProtectData(&in, desc, &ent, 0, nil, windows.CRYPTPROTECT_UI_FORBIDDEN, &out); err != nil {
		return nil, fmt.Errorf("dpapi protect: %w", err)
	}
	defer windows.LocalFree(windows.Handle(unsafe.Pointer(out.Data)))
	return bytes.Clone(unsafe.Slice(out.Data, out.Size)), nil
}

// Unprotect decrypts a blob made by Protect for the current user.
func Unprotect(sealed []byte) ([]byte, error) {
	if len(sealed) == 0 {
		return nil, errors.New("dpapi unprotect: empty data")
	}
	in := blob(sealed)
	ent := blob([]byte(dpapiEntropy))
	var out windows.DataBlob
	if err := windows.CryptUnprotectData(&in, nil, &ent, 0, nil, windows.CRYPTPROTECT_UI_FORBIDDEN, &out); err != nil {
		return nil, fmt.Errorf("dpapi unprotect: %w", err)
	}
	defer windows.LocalFree(windows.Handle(unsafe.Pointer(out.Data)))
	plain := unsafe.Slice(out.Data, out.Size)
	result := bytes.Clone(plain)
	clear(plain)
	return result, nil
}

func blob(b []byte) windows.DataBlob {
	return windows.DataBlob{Size: uint32(len(b)), Data: unsafe.SliceData(b)}
}

func seal(key []byte) ([]byte, error) {
	p, err := Protect(key)
	if err != nil {
		return nil, err
	}
	return append([]byte(sealMagic), p...), nil
}

func unseal(b []byte) ([]byte, error) {
	p, ok := bytes.CutPrefix(b, []byte(sealMagic))
	if !ok {
		return nil, errors.New("not a DPAPI-protected Hearth key file")
	}
	return Unprotect(p)
}

// readKeyFile reads at most limit bytes. Access to files under
// %LOCALAPPDATA% is governed by the profile's ACLs, and the content is
// DPAPI-encrypted, so no mode check applies here.
func readKeyFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New("file too large")
	}
	return b, nil
}
