package uia

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// DefaultProvider returns Windows UI Automation through its COM client
// API (IUIAutomation, CLSID_CUIAutomation), walked with the control view
// tree walker. golang.org/x/sys/windows is all it needs: the UI
// Automation interfaces derive from IUnknown, not IDispatch, so a COM
// automation library would add nothing but CoCreateInstance.
func DefaultProvider() Provider { return &winProvider{} }

type winProvider struct {
	auto   *iface // IUIAutomation
	walker *iface // IUIAutomationTreeWalker over the control view
	coInit bool
}

// Open makes the calling thread a single-threaded apartment and creates
// the IUIAutomation object on it.
func (p *winProvider) Open() error {
	err := windows.CoInitializeEx(0, windows.COINIT_APARTMENTTHREADED)
	// S_FALSE (1): COM was already initialized on this thread as an STA;
	// it still needs its CoUninitialize.
	if err != nil && !errors.Is(err, syscall.Errno(1)) {
		return fmt.Errorf("%s: CoInitializeEx(COINIT_APARTMENTTHREADED): %v", Unavailable, err)
	}
	p.coInit = true
	auto, err := coCreateInstance(&clsidCUIAutomation, &iidIUIAutomation)
	if err != nil {
		p.Close()
		return fmt.Errorf("%s: create CUIAutomation: %v", Unavailable, err)
	}
	p.auto = auto
	var w *iface
	if err := auto.call(autoGetControlWalker, uintptr(unsafe.Pointer(&w))); err != nil || w == nil {
		p.Close()
		return fmt.Errorf("%s: get the control view walker: %v", Unavailable, err)
	}
	p.walker = w
	return nil
}

func (p *winProvider) Close() {
	p.walker.release()
	p.auto.release()
	p.walker, p.auto = nil, nil
	if p.coInit {
		windows.CoUninitialize()
		p.coInit = false
	}
}

func (p *winProvider) rootElement() (*iface, error) {
	var root *iface
	if err := p.auto.call(autoGetRootElement, uintptr(unsafe.Pointer(&root))); err != nil || root == nil {
		return nil, fmt.Errorf("GetRootElement: %v", err)
	}
	return root, nil
}

// maxTopLevel bounds the top-level windows scanned for a process.
const maxTopLevel = 4096

func (p *winProvider) Roots(s Scope) ([]Ref, error) {
	switch {
	case s.HWND != 0:
		h := windows.HWND(uintptr(s.HWND))
		if !windows.IsWindow(h) {
			return nil, fmt.Errorf("hwnd %d is not a window: %w", s.HWND, ErrNotFound)
		}
		var el *iface
		if err := p.auto.call(autoElementFromHandle, uintptr(h), uintptr(unsafe.Pointer(&el))); err != nil || el == nil {
			return nil, fmt.Errorf("ElementFromHandle(%d): %v", s.HWND, err)
		}
		return []Ref{el}, nil
	case s.ProcessID != 0:
		root, err := p.rootElement()
		if err != nil {
			return nil, err
		}
		defer root.release()
		wins, _, err := p.Children(root, maxTopLevel)
		if err != nil {
			return nil, err
		}
		var out []Ref
		for _, w := range wins {
			var pid int32
			el := w.(*iface)
			if el.call(elProcessID, uintptr(unsafe.Pointer(&pid))) == nil && int(pid) == s.ProcessID {
				out = append(out, el)
			} else {
				el.release()
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("process %d has no top-level window: %w", s.ProcessID, ErrNotFound)
		}
		return out, nil
	}
	root, err := p.rootElement()
	if err != nil {
		return nil, err
	}
	return []Ref{root}, nil
}

func (p *winProvider) Children(r Ref, limit int) ([]Ref, bool, error) {
	el := r.(*iface)
	var c *iface
	if err := p.walker.call(walkGetFirstChild, uintptr(unsafe.Pointer(el)), uintptr(unsafe.Pointer(&c))); err != nil {
		return nil, false, err
	}
	var out []Ref
	for c != nil {
		if len(out) == limit {
			c.release()
			return out, true, nil
		}
		out = append(out, c)
		var next *iface
		if err := p.walker.call(walkGetNextSibling, uintptr(unsafe.Pointer(c)), uintptr(unsafe.Pointer(&next))); err != nil {
			if errors.Is(err, ErrGone) {
				// The last child vanished; what was read stands.
				break
			}
			for _, o := range out {
				o.(*iface).release()
			}
			return nil, false, err
		}
		c = next
	}
	return out, false, nil
}

type rect struct{ left, top, right, bottom int32 }

// Props reads the current properties. An element that vanished is
// ErrGone; a property its provider does not implement stays empty.
func (p *winProvider) Props(r Ref) (Props, error) {
	el := r.(*iface)
	var pr Props
	var gone bool
	get := func(method int, out unsafe.Pointer) bool {
		err := el.call(method, uintptr(out))
		gone = gone || errors.Is(err, ErrGone)
		return err == nil
	}
	str := func(method int) string {
		var b *uint16
		if get(method, unsafe.Pointer(&b)) {
			return bstr(b)
		}
		return ""
	}
	var pid, ct, focused, enabled, offscreen, password int32
	var hwnd uintptr
	var rc rect
	pr.Name = str(elName)
	if gone {
		return Props{}, ErrGone
	}
	pr.AutomationID = str(elAutomationID)
	pr.ClassName = str(elClassName)
	get(elProcessID, unsafe.Pointer(&pid))
	get(elControlType, unsafe.Pointer(&ct))
	get(elHasKeyboardFocus, unsafe.Pointer(&focused))
	get(elIsEnabled, unsafe.Pointer(&enabled))
	get(elIsOffscreen, unsafe.Pointer(&offscreen))
	get(elIsPassword, unsafe.Pointer(&password))
	get(elNativeWindowHandle, unsafe.Pointer(&hwnd))
	get(elBoundingRectangle, unsafe.Pointer(&rc))
	if gone {
		return Props{}, ErrGone
	}
	pr.ProcessID, pr.ControlType = int(pid), ControlTypeName(int(ct))
	pr.Focused, pr.Enabled, pr.Offscreen, pr.Password = focused != 0, enabled != 0, offscreen != 0, password != 0
	pr.HWND = uint64(hwnd)
	pr.Bounds = Bounds{X: int(rc.left), Y: int(rc.top), W: int(rc.right - rc.left), H: int(rc.bottom - rc.top)}
	for _, pat := range probedPatterns {
		if pat.id == patValue {
			continue
		}
		var obj *iface
		if el.call(elGetCurrentPattern, pat.id, uintptr(unsafe.Pointer(&obj))) == nil && obj != nil {
			pr.Patterns = append(pr.Patterns, pat.name)
			obj.release()
		}
	}
	var vp *iface
	if el.call(elGetCurrentPatternAs, patValue, uintptr(unsafe.Pointer(&iidValuePattern)), uintptr(unsafe.Pointer(&vp))) == nil && vp != nil {
		pr.Patterns = append(pr.Patterns, "value")
		if !pr.Password {
			var b *uint16
			if vp.call(valueCurrentValue, uintptr(unsafe.Pointer(&b))) == nil {
				v := bstr(b)
				pr.Value = &v
			}
		}
		vp.release()
	}
	return pr, nil
}

func (p *winProvider) Release(r Ref) { r.(*iface).release() }

func (p *winProvider) pattern(el *iface, id uintptr, iid *windows.GUID) (*iface, error) {
	var obj *iface
	if err := el.call(elGetCurrentPatternAs, id, uintptr(unsafe.Pointer(iid)), uintptr(unsafe.Pointer(&obj))); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, ErrUnsupported
	}
	return obj, nil
}

func (p *winProvider) Invoke(r Ref) error {
	ip, err := p.pattern(r.(*iface), patInvoke, &iidInvokePattern)
	if err != nil {
		return err
	}
	defer ip.release()
	return ip.call(invokeInvoke)
}

func (p *winProvider) Focus(r Ref) error { return r.(*iface).call(elSetFocus) }

func (p *winProvider) SetValue(r Ref, value string) error {
	vp, err := p.pattern(r.(*iface), patValue, &iidValuePattern)
	if err != nil {
		return err
	}
	defer vp.release()
	b, err := newBSTR(value)
	if err != nil {
		return err
	}
	defer freeBSTR(b)
	return vp.call(valueSetValue, uintptr(unsafe.Pointer(b)))
}
