//go:build !unix

package capture

import "os"

// fileID is not known here: files are compared with os.SameFile.
type fileID struct{}

func fileIDOf(os.FileInfo) (fileID, bool) { return fileID{}, false }
