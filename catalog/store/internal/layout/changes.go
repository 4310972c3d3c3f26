package layout

// The change lists (docs/CONTRACT.md, Changes). Each import that replaces a
// catalogue is a step of its history, numbered from 1; the file holds the
// last steps, each a list of what it changed, in the bucket
//
//	changes    step (4 bytes, big-endian), then the kind byte (ChangeSet,
//	           ChangeCard, ChangeNames, in that order), then the id (none
//	           for ChangeNames) -> the zone byte of the
//	           record before the step, then after it; ZoneNone when there
//	           was none, or is none
//
// so that one cursor per step walks its list by kind and id, and a walk
// that merges the lists of the steps after a generation meets each record
// once, with what it was before the first of them and is after the last.
// Info.History says which generation each step came from and led to. A file
// without the bucket has no history; the bucket is optional so that files
// written before it still open.

// BucketChanges holds the history above.
var BucketChanges = []byte("changes")

// The kinds of records in change keys, in the order their changes are
// listed.
const (
	ChangeSet   byte = 1
	ChangeCard  byte = 2
	ChangeNames byte = 3 // the name groups, all of them, as one record
)

// ZoneNone marks the absence of a record in a change; ZoneAll a record of
// every zone (the name groups).
const (
	ZoneNone byte = 0xFF
	ZoneAll  byte = 0xFE
)

// HistoryStep is one import of a catalogue file's history: it replaced
// generation From with To, changing Changes records.
type HistoryStep struct {
	Step    uint32 `json:"step"`
	From    string `json:"from"`
	To      string `json:"to"`
	Changes int64  `json:"changes"`
}
