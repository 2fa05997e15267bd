package pipeline

import (
	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
)

// sinkStage sees the chunks' rows in file order, on one goroutine: it
// counts the distinct servers (one set for the run instead of one per
// worker), numbers the tools, and hands the rows to the table writers.
// Everything costly was done by the decode stage; what is left here is
// linear in the tools and cheap.
type sinkStage struct {
	servers   *aggregate.Counters
	tables    *tablesStage
	ordinal   int64
	lastKey   aggregate.ServerKey
	lastFlags uint8
	haveLast  bool
	defs      definitionTally
	names     nameOrdinals
	limit     *memoryLimit
}

// newSinkStage makes the sink of a run; its workers compute the tools'
// name keys (nameKeyer), which the sink counts.
func newSinkStage(tables *tablesStage) *sinkStage {
	return &sinkStage{servers: aggregate.New(), tables: tables}
}

// chunk is the pipeline's sink function.
func (s *sinkStage) chunk(rows *chunkRows) error {
	for i, key := range rows.keys {
		if rows.hasServer[i] {
			s.server(key, rows.surface[i])
		}
	}
	rows.firstOrdinal = s.ordinal
	s.names.add(&rows.tools, rows.nameKeys)
	s.defs.add(rows)
	s.ordinal += int64(rows.tools.Len())
	s.limit.update(s.defs.bytes() + s.names.bytes())
	return s.tables.send(rows)
}

// server records one tool's server and the server-counted figures it
// carries.
func (s *sinkStage) server(key aggregate.ServerKey, surface uint8) {
	var flags uint8
	for fi := range surfaceFigures {
		if surfaceFigures[fi].CountServers && surface&(1<<fi) != 0 {
			flags |= 1 << fi
		}
	}
	// Tools of one server come together in most files: skip the map for a
	// repeat of the previous id and its flags.
	if !s.haveLast || key != s.lastKey {
		s.lastKey, s.lastFlags, s.haveLast = key, 0, true
		s.servers.AddServer(key, flags)
	} else if flags&^s.lastFlags != 0 {
		s.servers.AddServer(key, flags)
	}
	s.lastFlags |= flags
}
