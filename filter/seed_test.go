package filter

import (
	"os"
	"strconv"
)

var boolSeed, boolCount = func() (int64, int) {
	s, _ := strconv.ParseInt(os.Getenv("BOOLSEED"), 10, 64)
	if s == 0 {
		s = 2
	}
	n, _ := strconv.Atoi(os.Getenv("BOOLCOUNT"))
	if n == 0 {
		n = 150
	}
	return s, n
}()
