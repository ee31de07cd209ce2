//go:build unix

package rundir

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nobody is the uid a lock file planted by another user has in these
// tests (os.Chown, as root).
const nobody = 65534

// TestLockFileIsTheUsers (issue 53): the lock file is made 0600, one an
// earlier deepprof made 0644 becomes 0600, and while it is held it records
// its holder (pid, uid, command), which it forgets when let go.
func TestLockFileIsTheUsers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, LockFile)
	l, err := LockRun(dir)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), fmt.Sprintf("deepprof lock held by pid %d, uid %d, since ", os.Getpid(), os.Geteuid()))
	require.NoError(t, l.Unlock())
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Empty(t, b)

	require.NoError(t, os.Chmod(path, 0o644))
	l, err = LockRun(dir)
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
	st, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// TestLockOwnedByAnother (issue 53): a lock file another user owns is
// refused at once, naming the file and its owner: the user is made to be
// another here (lockOptions.uid), whoever runs the test.
func TestLockOwnedByAnother(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := LockRun(dir)
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
	o := defaultLockOptions()
	o.uid = os.Geteuid() + 1
	_, err = lockRun(dir, o)
	var oe *LockOwnerError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, fmt.Sprintf("%s: the lock file belongs to uid %d, not to you (uid %d), and deepprof takes no lock another user can hold: write elsewhere, or have its owner remove it",
		filepath.Join(dir, LockFile), os.Geteuid(), os.Geteuid()+1), err.Error())
}

// TestPlantedLock (issue 53): another user's world-writable .deepprof.lock,
// held, beside a manifest.json in a shared folder: a regions --out below
// it (WriteOwnedDir) is refused at once, naming the file and its owner,
// where it used to wait on it for ever. As root, the planted file is given
// to nobody.
func TestPlantedLock(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("making a file another user's needs root (TestLockOwnedByAnother covers the check)")
	}
	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o1777))
	require.NoError(t, os.WriteFile(filepath.Join(shared, ManifestJSON), []byte(`{"run_id": "r"}`), 0o644))
	require.NoError(t, WriteMark(shared, "r")) // a run, whose writes take its lock
	planted := filepath.Join(shared, LockFile)
	f, err := os.OpenFile(planted, os.O_RDWR|os.O_CREATE, 0o666)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Chmod(0o666))
	require.NoError(t, f.Chown(nobody, nobody))
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX)) // the planter holds it

	done := make(chan error, 1)
	go func() {
		done <- WriteOwnedDir(filepath.Join(shared, "mine"), []File{{Rel: "report.md", Data: []byte("x")}})
	}()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("regions --out waits on a lock another user planted")
	}
	var oe *LockOwnerError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, nobody, oe.Owner)
	assert.Contains(t, err.Error(), planted+": the lock file belongs to uid 65534, not to you (uid 0)")
}

// TestLockHeldByStoppedProcess (issue 53): a lock held by a process that
// was stopped (SIGSTOP) is waited on for the bound only: the wait says
// once, at its start, who holds it (the pid the lock file records), and
// ends with an error naming the holder and what to do. The bound is short
// here (lockOptions.wait); LockRun's is LockWait.
func TestLockHeldByStoppedProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	holder := exec.Command(os.Args[0], "-test.run=^TestLockHolder$")
	holder.Env = append(os.Environ(), "DEEPPROF_TEST_LOCK_HOLDER="+dir)
	stdout, err := holder.StdoutPipe()
	require.NoError(t, err)
	stdin, err := holder.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	defer func() {
		holder.Process.Kill()
		stdin.Close()
		holder.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	require.NoError(t, holder.Process.Signal(syscall.SIGSTOP))

	var notice strings.Builder
	o := defaultLockOptions()
	o.wait, o.notice = 300*time.Millisecond, &notice
	began := time.Now()
	_, err = lockRun(dir, o)
	var he *LockHeldError
	require.ErrorAs(t, err, &he)
	assert.GreaterOrEqual(t, time.Since(began), o.wait)
	pid := fmt.Sprintf("pid %d, uid %d, since ", holder.Process.Pid, os.Geteuid())
	assert.Contains(t, err.Error(), filepath.Join(dir, LockFile)+": still held after 300ms by "+pid)
	assert.Contains(t, err.Error(), "run again once it has ended, or end it (a stopped process holds its lock too)")
	assert.Equal(t, 1, strings.Count(notice.String(), "\n"), "one notice: %q", notice.String())
	assert.Contains(t, notice.String(), "deepprof: "+filepath.Join(dir, LockFile)+" is held by "+pid)
	assert.Contains(t, notice.String(), ": waiting for it, 300ms at most\n")

	// Its end lets the lock go.
	require.NoError(t, holder.Process.Kill())
	holder.Wait()
	l, err := lockRun(dir, o)
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
}

// TestLockHolder is TestLockHeldByStoppedProcess's holder, in a process of
// its own: it holds the lock of $DEEPPROF_TEST_LOCK_HOLDER, says so, and
// keeps it until its stdin closes.
func TestLockHolder(t *testing.T) {
	dir := os.Getenv("DEEPPROF_TEST_LOCK_HOLDER")
	if dir == "" {
		t.Skip("the holder of TestLockHeldByStoppedProcess")
	}
	l, err := LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	l.Unlock()
}

// TestLockWaitNoticeOnce: a writer that waits for another says so once,
// and goes on when the other lets go.
func TestLockWaitNoticeOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := LockRun(dir)
	require.NoError(t, err)
	var notice lockedBuffer
	o := defaultLockOptions()
	o.notice = &notice
	got := make(chan error, 1)
	go func() {
		l, err := lockRun(dir, o)
		if err == nil {
			err = l.Unlock()
		}
		got <- err
	}()
	// Let go once the second writer has said it waits.
	for deadline := time.Now().Add(30 * time.Second); notice.String() == ""; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the second writer never said it waits")
	}
	require.NoError(t, first.Unlock())
	require.NoError(t, <-got)
	assert.Equal(t, 1, strings.Count(notice.String(), "\n"), "%q", notice.String())
	assert.Contains(t, notice.String(), fmt.Sprintf("is held by pid %d, ", os.Getpid()))
}

// lockedBuffer is a notice writer read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
