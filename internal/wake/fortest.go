package wake

// seams are what the package's own tests set (export_test.go); nothing a
// config file or a tool reaches, and all zero in the program.
type seams struct {
	origins   []string
	extraArgs []string
	startURL  string
	hold      bool // no binder passes (guarded by mu)
}
