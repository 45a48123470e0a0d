package settings

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxValueFile is the limit of the file a <VAR>_FILE variable names: it holds one value (an
// identity, a token, an API key), which is never near 64 KiB, while a wrong path (a device, a
// log, a disk image) is far larger and must fail before it is read.
const MaxValueFile = 64 << 10

var (
	// ErrNotRegular is a path that names a directory, a named pipe, a device or a socket: what
	// it gives cannot be read as a file's content, or not without blocking.
	ErrNotRegular = errors.New("settings: not a regular file")
	// ErrTooLarge is a file larger than its reader's limit.
	ErrTooLarge = errors.New("settings: larger than the limit")
)

// FileError is a file that a setting names and that cannot be used. It names the file and says
// what is wrong and what to do, and never quotes the file's content, which may be a secret.
// Its parts compose into the callers' messages: "<Path> (named by VAR) <Problem>: <Fix>".
type FileError struct {
	// Path is the path as the setting gave it.
	Path string
	// Problem is a predicate about the file, e.g. "is a named pipe (FIFO), not a regular file".
	Problem string
	// Fix says what to do, e.g. "use a regular file (a symbolic link to one is fine)".
	Fix string
	// Err is ErrNotRegular, ErrTooLarge, or the system's error (matching fs.ErrNotExist,
	// fs.ErrPermission, …).
	Err error
}

// Error reads "/dev/zero is a character device, not a regular file: use a regular file (a
// symbolic link to one is fine)".
func (e *FileError) Error() string { return e.Path + " " + e.Problem + ": " + e.Fix }

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// ReadFile returns the content of the file at path, which must be a regular file (a symbolic
// link to one is fine) of at most limit bytes; every error it returns is a *FileError. It never
// blocks on a named pipe or a device and never reads more than limit+1 bytes:
//
//   - it stats path first, so that a path naming anything but a regular file (or larger than
//     limit) fails without being opened: opening a device can have effects of its own;
//   - it opens without blocking (O_NONBLOCK where the system has it), so that a named pipe put
//     in place after the stat cannot hold the process in open(2);
//   - it checks the opened descriptor again with fstat, so that what is read is the regular
//     file checked, whatever was swapped in between;
//   - it reads through a limit, so that a file that grows after the check still stops at it.
func ReadFile(path string, limit int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, accessError(path, err)
	}
	if err := check(path, info, limit); err != nil {
		return nil, err
	}
	return readOpened(path, limit)
}

// readOpened opens path without blocking and reads it if the descriptor is a regular file of at
// most limit bytes: the part of ReadFile that must hold even when the file checked by the stat
// has been replaced since.
func readOpened(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, accessError(path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, accessError(path, err)
	}
	if err := check(path, info, limit); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, accessError(path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// check refuses what is not a regular file, and a regular file larger than limit.
func check(path string, info fs.FileInfo, limit int64) error {
	mode := info.Mode()
	if !mode.IsRegular() {
		return &FileError{Path: path, Problem: "is " + kind(mode) + ", not a regular file",
			Fix: "use a regular file (a symbolic link to one is fine)", Err: ErrNotRegular}
	}
	if info.Size() > limit {
		return tooLarge(path, limit)
	}
	return nil
}

// kind names a file mode that is not a regular file's, with its article.
func kind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

func tooLarge(path string, limit int64) *FileError {
	return &FileError{Path: path, Problem: "is larger than " + Size(limit),
		Fix: "use a file of at most " + Size(limit), Err: ErrTooLarge}
}

// accessError describes a failure to stat, open or read path. Only the system's reason is
// kept, not its wording of the path again.
func accessError(path string, err error) *FileError {
	fe := &FileError{Path: path, Err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fe.Problem, fe.Fix = "does not exist", "create the file, or correct the path"
		if l, lerr := os.Lstat(path); lerr == nil && l.Mode()&fs.ModeSymlink != 0 {
			fe.Problem = "is a symbolic link to a file that does not exist"
		}
	case errors.Is(err, fs.ErrPermission):
		fe.Problem = "cannot be read by this process (permission denied)"
		fe.Fix = "make the file readable by the user the process runs as, or use another file"
	default:
		reason := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err
		}
		fe.Problem, fe.Fix = fmt.Sprintf("cannot be read (%v)", reason), "use a readable regular file"
	}
	return fe
}

// Size reads a limit as "64 KiB" or "1 MiB", for the messages of whatever bounds a read.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
