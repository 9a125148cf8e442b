//go:build windows

package wake

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// crtPipeChild reads one NUL-terminated JSON command from C runtime
// descriptor 3 and answers it on descriptor 4, as a browser started with
// --remote-debugging-pipe does. It goes through msvcrt's own _read and
// _write, so the descriptors exist only if the C runtime found the pipe
// handles in the inherited handle table of its STARTUPINFO.
func crtPipeChild() int {
	crt := windows.NewLazySystemDLL("msvcrt.dll")
	read, write := crt.NewProc("_read"), crt.NewProc("_write")
	buf := make([]byte, 4096)
	var msg []byte
	for {
		n, _, _ := read.Call(3, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if int32(uint32(n)) <= 0 {
			return 2
		}
		msg = append(msg, buf[:int32(uint32(n))]...)
		if i := bytes.IndexByte(msg, 0); i >= 0 {
			msg = msg[:i]
			break
		}
	}
	var cmd struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
	}
	if err := json.Unmarshal(msg, &cmd); err != nil {
		return 3
	}
	out, _ := json.Marshal(map[string]any{"id": cmd.ID, "result": map[string]any{"product": "crt-child/" + cmd.Method}})
	out = append(out, 0)
	if n, _, _ := write.Call(4, uintptr(unsafe.Pointer(&out[0])), uintptr(len(out))); int(int32(uint32(n))) != len(out) {
		return 4
	}
	return 0
}

// TestSpawnPassesThePipeAsCRTDescriptors starts a real child through
// spawn and talks CDP framing with it over descriptors 3 and 4.
func TestSpawnPassesThePipeAsCRTDescriptors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := spawn(exe, []string{crtChildArg})
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	c := newConn(p.fromChild, p.toChild, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var v struct {
		Product string `json:"product"`
	}
	if err := c.Call(ctx, "", "Browser.getVersion", nil, &v); err != nil {
		t.Fatalf("call over the CRT pipe: %v", err)
	}
	if v.Product != "crt-child/Browser.getVersion" {
		t.Fatalf("answer %q", v.Product)
	}
	if err := p.wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the answer pipe did not close when the child ended")
	}
	c.Close()
}

// TestCRTHandleTableLayout checks the lpReserved2 block: a 32-bit count,
// one flag byte per descriptor, then the packed HANDLEs.
func TestCRTHandleTableLayout(t *testing.T) {
	b := crtHandleTable([]windows.Handle{0, 0, 0, 0x1234, 0x5678})
	if len(b) != 4+5+5*8 {
		t.Fatalf("block is %d bytes", len(b))
	}
	if n := binary.LittleEndian.Uint32(b); n != 5 {
		t.Fatalf("count %d", n)
	}
	if !bytes.Equal(b[4:9], []byte{0, 0, 0, crtOpen | crtPipe, crtOpen | crtPipe}) {
		t.Fatalf("flags %v", b[4:9])
	}
	handle := func(i int) uint64 { return binary.LittleEndian.Uint64(b[9+8*i:]) }
	if handle(0) != uint64(windows.InvalidHandle) || handle(3) != 0x1234 || handle(4) != 0x5678 {
		t.Fatalf("handles %x %x %x", handle(0), handle(3), handle(4))
	}
}
