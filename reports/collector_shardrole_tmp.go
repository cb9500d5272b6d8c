package reports

import "github.com/rocedump/rocedump/decode/packet"

// shardRole says which frames a shard Collector keeps. (Temporary: the
// lead's sharding work moves this to collector_shard.go.)
type shardRole struct {
	index, count int
}

func (r shardRole) owns(p *packet.Packet) bool { return true }
