# Performance benchmark (issue 6): see BENCHMARKS.md and package bench.
# The captures go to a temporary directory and are removed afterwards.
GO ?= go

.PHONY: bench bench-quick bench-go pgo

# 20 M packets per capture: about 10 minutes on 2 cores, ~5 GB of temporary files.
# Before measuring it waits (up to 10 minutes) for a 1-minute load average below 2.
bench:
	$(GO) run ./cmd/rocebench -packets 20000000 -wait-load 2 -wait-max 10m -o BENCHMARKS.md

# 1 M packets: a minute or two; prints the table without touching BENCHMARKS.md.
bench-quick:
	$(GO) run ./cmd/rocebench -packets 1000000

# The per-stage Go benchmarks of the offline hot path (BENCHMARKS.md, "Where the time goes").
bench-go:
	$(GO) test -run '^$$' -bench HotPath -benchmem ./bench/

# The CPU profile the compiler optimises rocedump with (profile-guided
# optimisation: go build reads cmd/rocedump/default.pgo by itself). Re-run it
# when the hot path changes; BENCHMARKS.md says what it gives.
pgo:
	GOMAXPROCS=1 $(GO) test -run '^$$' -bench HotPathCommand -benchtime 3x -cpuprofile $(CURDIR)/cmd/rocedump/default.pgo ./bench/
	rm -f bench.test
