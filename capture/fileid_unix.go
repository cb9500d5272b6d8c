//go:build unix

package capture

import (
	"os"
	"syscall"
)

// fileID is what os.SameFile compares on Unix: the device and the inode.
type fileID struct{ dev, ino uint64 }

// fileIDOf returns st's fileID; ok is false if st does not carry one.
func fileIDOf(st os.FileInfo) (id fileID, ok bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(s.Dev), uint64(s.Ino)}, true
}
