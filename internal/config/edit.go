package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// SetStrings sets top-level string keys of the config file at path (for
// instance mcp_addr when Hearth moved to a free port) and leaves every
// other byte of the file as it was: the user's other keys, their order,
// spacing and values. A key the file lacks is added at the top of the
// object. The result must load (Parse), or nothing is written; the file
// is replaced atomically (a temporary file beside it, synced, renamed
// over it), so a crash leaves the old file or the new one, never a mix.
func SetStrings(path string, values map[string]string) error {
	for k := range values {
		if !topKeys()[k] {
			return &Error{File: path, Key: k, Msg: "unknown key"}
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("update config %s: %w", path, err)
	}
	out, err := setStrings(data, values)
	if err != nil {
		return &Error{File: path, Msg: err.Error()}
	}
	if _, err := Parse(path, out); err != nil {
		return fmt.Errorf("update config %s: the result would not load: %w", path, err)
	}
	return writeAtomic(path, out)
}

// setStrings is SetStrings on the file's bytes.
func setStrings(data []byte, values map[string]string) ([]byte, error) {
	type span struct{ start, end int64 }
	found := map[string]span{}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	open := dec.InputOffset() // just after '{'
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("not a JSON object: key %q: %w", key, err)
		}
		if _, want := values[key]; want {
			end := dec.InputOffset()
			found[key] = span{end - int64(len(raw)), end}
		}
	}
	// Splice from the end of the file backwards, so that earlier offsets
	// stay valid.
	var spans []string
	for k := range found {
		spans = append(spans, k)
	}
	sort.Slice(spans, func(i, j int) bool { return found[spans[i]].start > found[spans[j]].start })
	out := bytes.Clone(data)
	for _, k := range spans {
		v, _ := json.Marshal(values[k])
		s := found[k]
		out = append(out[:s.start:s.start], append(v, out[s.end:]...)...)
	}
	var missing []string
	for k := range values {
		if _, ok := found[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		var ins bytes.Buffer
		empty := len(found) == 0 && !hasKeys(data)
		for i, k := range missing {
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(values[k])
			fmt.Fprintf(&ins, "\n  %s: %s", kb, vb)
			if i < len(missing)-1 || !empty {
				ins.WriteByte(',')
			}
		}
		if empty {
			ins.WriteByte('\n')
		}
		out = append(out[:open:open], append(ins.Bytes(), out[open:]...)...)
	}
	return out, nil
}

// hasKeys reports whether the JSON object data has at least one key.
func hasKeys(data []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(data, &m) == nil && len(m) > 0
}

// writeAtomic replaces path with data through the one atomic writer
// (Write and SetKey both come here, so config.json has one way of being
// replaced); the file stays private (0600) whatever mode it had.
func writeAtomic(path string, data []byte) error {
	err := atomicfile.Replacer{Private: true}.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write config %s: %w", path, err)
	}
	return nil
}

// SetNestedString sets one string at the key path keys (for instance
// tunnel, client_sha256: the update's re-pin) as SetNested does.
func SetNestedString(path string, keys []string, value string) error {
	return SetNested(path, Setting{Keys: keys, Value: value})
}

// Setting is one value SetNested writes: its key path (tunnel, autostart)
// and its value, any value encoding/json encodes.
type Setting struct {
	Keys  []string
	Value any
}

// SetNested writes each setting at its key path and, like SetStrings,
// leaves every other byte of the file as it was (the user's other keys,
// their order, spacing and values: never every default of the running
// version); a missing key on a path is added (as an object holding the
// rest of the path). The result must load, or nothing is written; the
// file is replaced atomically, once for all the settings.
func SetNested(path string, settings ...Setting) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("update config %s: %w", path, err)
	}
	out := data
	for _, st := range settings {
		name := strings.Join(st.Keys, ".")
		if len(st.Keys) == 0 || !topKeys()[st.Keys[0]] {
			return &Error{File: path, Key: name, Msg: "unknown key"}
		}
		v, err := json.Marshal(st.Value)
		if err != nil {
			return &Error{File: path, Key: name, Msg: err.Error()}
		}
		if out, err = setNested(out, st.Keys, v); err != nil {
			return &Error{File: path, Key: name, Msg: err.Error()}
		}
	}
	if _, err := Parse(path, out); err != nil {
		return fmt.Errorf("update config %s: the result would not load: %w", path, err)
	}
	return writeAtomic(path, out)
}

// setNested sets the raw JSON value at keys in the object data.
func setNested(data []byte, keys []string, value json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	open := dec.InputOffset()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("not a JSON object: key %q: %w", key, err)
		}
		if key != keys[0] {
			continue
		}
		end := dec.InputOffset()
		start := end - int64(len(raw))
		repl := value
		if len(keys) > 1 {
			if repl, err = setNested(raw, keys[1:], value); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
		return append(bytes.Clone(data[:start]), append(repl, data[end:]...)...), nil
	}
	// Missing: added at the top of the object.
	nested := value
	for i := len(keys) - 1; i > 0; i-- {
		kb, _ := json.Marshal(keys[i])
		nested = append(append(append([]byte("{"), kb...), ':'), append(nested, '}')...)
	}
	kb, _ := json.Marshal(keys[0])
	ins := fmt.Sprintf("\n  %s: %s", kb, nested)
	if hasKeys(data) {
		ins += ","
	} else {
		ins += "\n"
	}
	return append(bytes.Clone(data[:open]), append([]byte(ins), data[open:]...)...), nil
}
