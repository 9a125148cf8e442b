package proc

// Job contains the process tree of a child Hearth creates itself rather
// than through os/exec (a program on a pseudo-console, which needs
// CreateProcess's extended startup information): the same Job Object, with
// kill-on-close, that Run and Tree use, so the tree dies on Kill, as soon
// as the child exits, and with Hearth.
type Job struct{ g *group }

// NewJob creates an empty job.
func NewJob() (*Job, error) {
	g, err := newGroup()
	if err != nil {
		return nil, err
	}
	return &Job{g: g}, nil
}

// Adopt puts pid, created suspended (CREATE_SUSPENDED), into the job and
// resumes it; nothing it starts can escape the job.
func (j *Job) Adopt(pid uint32) error { return j.g.adopt(pid) }

// Kill terminates every process in the job.
func (j *Job) Kill() error { return j.g.kill(nil) }

// Close releases the job once its child has exited; anything still in it
// ends.
func (j *Job) Close() {
	j.g.close()
}
