package lineage

import "flag"

// FlagName is the command-line flag every pipeline takes (and
// HAADE_LINEAGE, like every flag).
const FlagName = "lineage"

// Flag defines --lineage on fs and returns a func that reads it after
// Parse. Check the value with ParseURL (Open does), and name the flag in
// the error: the value itself may carry a token.
func Flag(fs *flag.FlagSet) func() string {
	v := fs.String(FlagName, "", "where to send OpenLineage run events: file:///path/events.ndjson (one JSON event per line) or http(s)://host/api/v1/lineage (POST, as Marquez takes them); empty: none")
	return func() string { return *v }
}
