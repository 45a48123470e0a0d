//go:build !unix

package filestore

import (
	"errors"
	"os"
)

var errUnsupported = errors.New("the file store needs Linux or macOS (flock)")

func lockFile(*os.File) error   { return errUnsupported }
func unlockFile(*os.File) error { return errUnsupported }

func tryLockFile(*os.File) (bool, error) { return false, errUnsupported }
