package startup

import (
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/windows/registry"
)

// The registry's sources: Run and RunOnce values, services, Excel's
// add-ins. A key is stamped by its last write time and value count
// (RegQueryInfoKey), so a look reads it again only when it changed.

// regKey is a registry key of a root, and how a person reads its name.
type regKey struct {
	root registry.Key
	name string // HKCU, HKLM
	path string
	// access adds the view (registry.WOW64_32KEY) to reading.
	access uint32
}

func (k regKey) String() string {
	if k.access&registry.WOW64_32KEY != 0 {
		return k.name + `\` + k.path + ` (32-bit)`
	}
	return k.name + `\` + k.path
}

func (k regKey) open() (registry.Key, error) {
	return registry.OpenKey(k.root, k.path, registry.QUERY_VALUE|registry.ENUMERATE_SUB_KEYS|k.access)
}

// stamp is the key's last write time and value count; "" when it
// cannot be opened.
func (k regKey) stamp() string {
	rk, err := k.open()
	if err != nil {
		return ""
	}
	defer rk.Close()
	st, err := rk.Stat()
	if err != nil {
		return ""
	}
	return strconv.FormatInt(st.ModTime().UnixNano(), 10) + "/" + strconv.Itoa(int(st.ValueCount)) + "/" + strconv.Itoa(int(st.SubKeyCount))
}

// values are the key's string values by name (REG_EXPAND_SZ expanded by
// the host's environment as the shell expands it).
func (k regKey) values(h host) map[string]string {
	rk, err := k.open()
	if err != nil {
		return nil
	}
	defer rk.Close()
	names, err := rk.ReadValueNames(-1)
	if err != nil {
		return nil
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		v, typ, err := rk.GetStringValue(n)
		if err != nil {
			continue
		}
		if typ == registry.EXPAND_SZ {
			if e, ok := h.expand(v); ok {
				v = e
			}
		}
		out[n] = v
	}
	return out
}

// runKeys are the keys whose values Windows runs at sign-in.
func runKeys() []regKey {
	const cv = `Software\Microsoft\Windows\CurrentVersion`
	var out []regKey
	for _, root := range []struct {
		k    registry.Key
		name string
	}{{registry.CURRENT_USER, "HKCU"}, {registry.LOCAL_MACHINE, "HKLM"}} {
		for _, p := range []string{cv + `\Run`, cv + `\RunOnce`, cv + `\Policies\Explorer\Run`} {
			out = append(out, regKey{root: root.k, name: root.name, path: p})
		}
	}
	for _, p := range []string{cv + `\Run`, cv + `\RunOnce`} {
		out = append(out, regKey{root: registry.LOCAL_MACHINE, name: "HKLM", path: p, access: registry.WOW64_32KEY})
	}
	return out
}

func runOrigins(h host) []origin {
	var out []origin
	for _, k := range runKeys() {
		out = append(out, entryOrigin("reg:"+k.String(), k.stamp, func() ([]Entry, []origin) {
			var es []Entry
			var more []origin
			for name, cmd := range k.values(h) {
				args := h.windowsCommand(cmd)
				e := Entry{Kind: KindRun, Name: name, Source: k.String() + `\` + name, Files: h.commandFiles(args, "")}
				es = append(es, e)
				more = append(more, h.scriptOrigins(e, args, "", 0)...)
			}
			return es, more
		}))
	}
	return out
}

// serviceEvery is how often the services are read again: enumerating
// every service's key costs milliseconds, and only an administrator
// adds or changes one.
const serviceEvery = time.Minute

func serviceOrigins(h host) []origin {
	k := regKey{root: registry.LOCAL_MACHINE, name: "HKLM", path: `SYSTEM\CurrentControlSet\Services`}
	stamp := func() string {
		if k.stamp() == "" {
			return ""
		}
		return strconv.FormatInt(time.Now().UnixNano()/int64(serviceEvery), 10)
	}
	return []origin{entryOrigin("reg:"+k.String(), stamp, func() ([]Entry, []origin) {
		rk, err := k.open()
		if err != nil {
			return nil, nil
		}
		names, err := rk.ReadSubKeyNames(-1)
		rk.Close()
		if err != nil {
			return nil, nil
		}
		var es []Entry
		for _, n := range names {
			sk := regKey{root: k.root, name: k.name, path: k.path + `\` + n}
			vs := sk.values(h)
			e := Entry{Kind: KindService, Name: n, Source: sk.String()}
			if img := vs["ImagePath"]; img != "" {
				e.Files = h.commandFiles(h.windowsCommand(serviceImage(h, img)), "")
			}
			if dll := (regKey{root: k.root, name: k.name, path: sk.path + `\Parameters`}).values(h)["ServiceDll"]; dll != "" {
				if f := h.argFile(dll, ""); f != "" {
					e.Files = append(e.Files, f)
				}
			}
			if len(e.Files) > 0 {
				es = append(es, e)
			}
		}
		return es, nil
	})}
}

// serviceImage is a service's ImagePath as a path a file system knows:
// \SystemRoot\ and \??\ prefixes and a path relative to the system root
// (System32\drivers\x.sys) as the service manager reads them.
func serviceImage(h host, img string) string {
	switch {
	case strings.HasPrefix(strings.ToLower(img), `\systemroot\`):
		return h.join(h.systemRoot(), img[len(`\systemroot\`):])
	case strings.HasPrefix(img, `\??\`):
		return img[4:]
	case strings.HasPrefix(strings.ToLower(img), `system32\`):
		return h.join(h.systemRoot(), img)
	}
	return img
}

// officeVersions are the Office versions whose Excel add-ins are read
// (2010 to 365).
var officeVersions = []string{"14.0", "15.0", "16.0"}

func excelAddinOrigins(h host) []origin {
	var out []origin
	for _, v := range officeVersions {
		k := regKey{root: registry.CURRENT_USER, name: "HKCU", path: `Software\Microsoft\Office\` + v + `\Excel\Options`}
		out = append(out, entryOrigin("reg:"+k.String(), k.stamp, func() ([]Entry, []origin) {
			var es []Entry
			for name, val := range k.values(h) {
				if !strings.HasPrefix(strings.ToUpper(name), "OPEN") {
					continue
				}
				e := Entry{Kind: KindOffice, Name: "Excel add-in " + name, Source: k.String() + `\` + name}
				for _, a := range windowsArgs("x " + val)[1:] {
					if f := h.argFile(a, ""); f != "" {
						e.Files = append(e.Files, f)
					}
				}
				es = append(es, e)
			}
			return es, nil
		}))
	}
	return out
}
