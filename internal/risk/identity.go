package risk

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Identities recognises the programs of the exec tables (AsksEveryTime,
// ArgTable) by what a file is, not by what it is called: a copy of bash
// saved as ~/bin/tool, or of cmd.exe as notes.exe, is still bash or cmd,
// and the tables apply to it as to the original. The programs it knows
// are the files named in the tables in the folders of PATH and the
// standard program folders. A file is one of them when it is the same
// file (a hard or symbolic link), when most of a sample of its 4 KiB
// blocks, taken at offsets chosen at random when the known programs are
// read, equal the known program's (so a copy with bytes appended, cut
// off or changed here and there is still recognised), or, on Windows,
// when its version resource names it (OriginalFilename, InternalName).
//
// What it says only ever adds to what asks: a name it finds is checked
// in addition to the name a call used, never instead of it. A multi-call
// program (one file installed under many names, as busybox or a one-file
// coreutils is) does what the name it is started by says, so started by
// one of its installed names it is told by that name alone; started by
// any other it is every program of the tables it is installed as.
type Identities struct {
	dirs func() []string
	seed maphash.Seed
	now  func() time.Time

	mu       sync.Mutex
	known    []knownProgram
	readAt   time.Time
	building bool
	answers  map[fileKey][]string
}

// identityBlock is the size of the blocks compared.
const identityBlock = 4096

// identitySamples is how many blocks of a known program are compared (at
// most half its blocks, at least 4); a file is that program when at
// least three quarters of them are equal.
const identitySamples = 16

// identityRefresh is how long the known programs are kept before the
// folders are read again (a program installed since is then known).
const identityRefresh = 5 * time.Minute

// identityAnswers bounds the answers kept; past it they are forgotten.
const identityAnswers = 4096

type knownProgram struct {
	path  string
	info  os.FileInfo
	names []string
	// installed are all the names it is installed under, when it is one
	// file under many (Unix: multiCall).
	installed []string
	// whole is the hash of the whole file, for a file too small (or too
	// uniform) to sample; samples are empty then.
	whole   uint64
	samples []blockSample
}

type blockSample struct {
	off  int64
	hash uint64
}

type fileKey struct {
	path  string
	size  int64
	mtime int64
}

// NewIdentities returns the recogniser of this OS's programs, found in
// the folders of getenv("PATH") and the OS's standard program folders.
func NewIdentities(getenv func(string) string) *Identities {
	return NewIdentitiesIn(func() []string { return programDirs(getenv) })
}

// NewIdentitiesIn returns a recogniser of the table programs found in
// the folders dirs returns (read again every few minutes).
func NewIdentitiesIn(dirs func() []string) *Identities {
	return &Identities{dirs: dirs, seed: maphash.MakeSeed(), now: time.Now}
}

// programDirs are the folders known programs are looked for in: PATH's
// and the standard ones.
func programDirs(getenv func(string) string) []string {
	dirs := filepath.SplitList(getenv("PATH"))
	if runtime.GOOS == "windows" {
		if root := getenv("SystemRoot"); root != "" {
			dirs = append(dirs, filepath.Join(root, "System32"), filepath.Join(root, "System32", "WindowsPowerShell", "v1.0"),
				filepath.Join(root, "SysWOW64"), root)
		}
		for _, k := range []string{"ProgramFiles", "ProgramFiles(x86)"} {
			if pf := getenv(k); pf != "" {
				dirs = append(dirs, filepath.Join(pf, "PowerShell", "7"), filepath.Join(pf, "nodejs"), filepath.Join(pf, "Git", "bin"),
					filepath.Join(pf, "Git", "usr", "bin"))
			}
		}
	} else {
		dirs = append(dirs, "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin")
	}
	var out []string
	for _, d := range dirs {
		if d != "" && filepath.IsAbs(d) && !slices.Contains(out, filepath.Clean(d)) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// Names returns the table names of the program at path (after symbolic
// links), sorted: empty for a file that is none of the known programs
// or does not exist; an error when it exists but cannot be read, so what
// it is cannot be told. Answers are kept by path, size and modification
// time.
func (id *Identities) Names(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tell which program %s is: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	key := fileKey{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	id.mu.Lock()
	defer id.mu.Unlock()
	id.refresh()
	if names, ok := id.answers[key]; ok {
		return names, nil
	}
	names, err := id.identify(path, fi)
	if err != nil {
		return nil, err
	}
	if len(id.answers) >= identityAnswers {
		clear(id.answers)
	}
	id.answers[key] = names
	return names, nil
}

// refresh reads the known programs (id.mu held): at the first look, and
// again, in the background while the old ones still answer, when they
// are older than identityRefresh (or the clock went back).
func (id *Identities) refresh() {
	now := id.now()
	if id.answers == nil {
		id.known, id.readAt, id.answers = id.build(), now, map[fileKey][]string{}
		return
	}
	if id.building || (now.Sub(id.readAt) < identityRefresh && !now.Before(id.readAt)) {
		return
	}
	id.building, id.readAt = true, now
	go func() {
		known := id.build()
		id.mu.Lock()
		defer id.mu.Unlock()
		id.known, id.building = known, false
		clear(id.answers)
	}()
}

// build reads the known programs from the program folders.
func (id *Identities) build() []knownProgram {
	want := tableNames()
	byPath := map[string]*knownProgram{}
	var order []string
	for _, dir := range id.dirs() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := ProgramName(e.Name())
			if !want[name] || (runtime.GOOS == "windows" && !strings.EqualFold(filepath.Ext(e.Name()), ".exe")) {
				continue
			}
			real, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if k, ok := byPath[real]; ok {
				if !slices.Contains(k.names, name) {
					k.names = append(k.names, name)
				}
				continue
			}
			k, err := id.read(real)
			if err != nil {
				continue
			}
			k.names = []string{name}
			byPath[real] = k
			order = append(order, real)
		}
	}
	known := make([]knownProgram, 0, len(order))
	for _, p := range order {
		slices.Sort(byPath[p].names)
		known = append(known, *byPath[p])
	}
	if runtime.GOOS != "windows" {
		id.countInstalled(known)
	}
	return known
}

// multiCall is how many names a program must be installed under to be a
// multi-call program (busybox, a one-file coreutils) that does what the
// name it is started by says.
const multiCall = 16

// countInstalled records the names each known program is installed under
// in the program folders, all names, to tell multi-call programs.
func (id *Identities) countInstalled(known []knownProgram) {
	bySize := map[int64][]int{}
	for i, k := range known {
		bySize[k.info.Size()] = append(bySize[k.info.Size()], i)
	}
	for _, dir := range id.dirs() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			fi, err := os.Stat(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			for _, i := range bySize[fi.Size()] {
				k := &known[i]
				if name := ProgramName(e.Name()); os.SameFile(fi, k.info) && !slices.Contains(k.installed, name) {
					k.installed = append(k.installed, name)
				}
			}
		}
	}
}

// read takes a known program's fingerprint: the hashes of identitySamples
// blocks at random offsets (blocks of one repeated byte, as padding is,
// are never chosen), or the hash of the whole file when it has too few
// other blocks.
func (id *Identities) read(path string) (*knownProgram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, errors.New("not a program file")
	}
	k := &knownProgram{path: path, info: fi}
	blocks := fi.Size() / identityBlock
	buf := make([]byte, identityBlock)
	if want := int(min(identitySamples, blocks/2)); want >= 4 {
		tried := map[int64]bool{}
		for tries := 0; tries < 8*identitySamples && len(k.samples) < want; tries++ {
			off := rand.Int64N(blocks) * identityBlock
			if tried[off] {
				continue
			}
			tried[off] = true
			if _, err := f.ReadAt(buf, off); err != nil {
				return nil, err
			}
			if uniform(buf) {
				continue
			}
			k.samples = append(k.samples, blockSample{off: off, hash: maphash.Bytes(id.seed, buf)})
		}
		if len(k.samples) >= 4 {
			return k, nil
		}
		k.samples = nil
	}
	if fi.Size() > 64<<20 {
		return nil, errors.New("too uniform to sample")
	}
	var h maphash.Hash
	h.SetSeed(id.seed)
	if _, err := io.Copy(&h, f); err != nil {
		return nil, err
	}
	k.whole = h.Sum64()
	return k, nil
}

func uniform(b []byte) bool {
	return len(b) > 0 && bytes.Count(b, b[:1]) == len(b)
}

// identify compares the file at path with every known program (id.mu
// held).
func (id *Identities) identify(path string, fi os.FileInfo) ([]string, error) {
	var names []string
	add := func(more []string) {
		for _, n := range more {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	add(versionNames(path, tableNames()))
	var f *os.File
	var whole uint64
	haveWhole := false
	buf := make([]byte, identityBlock)
	invoked := ProgramName(path)
	for i := range id.known {
		k := &id.known[i]
		if len(k.installed) >= multiCall && slices.Contains(k.installed, invoked) {
			// A multi-call program started by one of its own names is
			// that program (ls of a one-file coreutils is ls); started
			// by another, it may run what its first argument names.
			continue
		}
		if os.SameFile(fi, k.info) {
			add(k.names)
			continue
		}
		if f == nil {
			var err error
			if f, err = os.Open(path); err != nil {
				return nil, fmt.Errorf("tell which program %s is: %w", path, err)
			}
			defer f.Close()
		}
		if len(k.samples) == 0 {
			if fi.Size() != k.info.Size() {
				continue
			}
			if !haveWhole {
				var h maphash.Hash
				h.SetSeed(id.seed)
				if _, err := io.Copy(&h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
					return nil, fmt.Errorf("tell which program %s is: %w", path, err)
				}
				whole, haveWhole = h.Sum64(), true
			}
			if whole == k.whole {
				add(k.names)
			}
			continue
		}
		miss, allowed := 0, len(k.samples)/4
		for _, s := range k.samples {
			if n, _ := f.ReadAt(buf, s.off); n != identityBlock || maphash.Bytes(id.seed, buf) != s.hash {
				if miss++; miss > allowed {
					break
				}
			}
		}
		if miss <= allowed {
			add(k.names)
		}
	}
	slices.Sort(names)
	return names, nil
}
