package lineage

import (
	"encoding/json"
	"time"
)

// The spec versions this package writes. The facet schema versions are the
// ones openlineage-python 1.54.0 generates its model from.
const (
	// SchemaURL is the OpenLineage spec of a RunEvent.
	SchemaURL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
	// Producer is the producer URI of every event and facet.
	Producer = "https://github.com/haade/haade/tree/main/runners/lineage"
	// Namespace is the default job namespace.
	Namespace = "haade"

	schemaFacetURL           = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
	outputStatisticsFacetURL = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"
	errorMessageFacetURL     = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
	jobTypeFacetURL          = "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet"
	processingEngineFacetURL = "https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet"
	// SnapshotsFacetURL is the schema of the custom haade_snapshots facet,
	// kept beside this package (facets/HaadeSnapshotsOutputDatasetFacet.json).
	SnapshotsFacetURL = "https://github.com/haade/haade/blob/main/runners/lineage/facets/HaadeSnapshotsOutputDatasetFacet.json#/$defs/HaadeSnapshotsOutputDatasetFacet"
)

// EventType is a run's state transition.
type EventType string

// The event types HAADE emits.
const (
	Start    EventType = "START"
	Running  EventType = "RUNNING"
	Complete EventType = "COMPLETE"
	Fail     EventType = "FAIL"
	Abort    EventType = "ABORT"
)

// RunEvent is an OpenLineage run event, as it goes on the wire.
type RunEvent struct {
	EventType EventType       `json:"eventType"`
	EventTime string          `json:"eventTime"`
	Run       RunRef          `json:"run"`
	Job       JobRef          `json:"job"`
	Inputs    []InputDataset  `json:"inputs"`
	Outputs   []OutputDataset `json:"outputs"`
	Producer  string          `json:"producer"`
	SchemaURL string          `json:"schemaURL"`
}

// RunRef is the run of an event: its id, the same in every event of one run.
type RunRef struct {
	RunID  string         `json:"runId"`
	Facets map[string]any `json:"facets,omitempty"`
}

// JobRef names the job: the namespace and the pipeline id.
type JobRef struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Facets    map[string]any `json:"facets,omitempty"`
}

// InputDataset is a dataset a run reads.
type InputDataset struct {
	Namespace   string         `json:"namespace"`
	Name        string         `json:"name"`
	Facets      map[string]any `json:"facets,omitempty"`
	InputFacets map[string]any `json:"inputFacets,omitempty"`
}

// OutputDataset is a dataset a run writes.
type OutputDataset struct {
	Namespace    string         `json:"namespace"`
	Name         string         `json:"name"`
	Facets       map[string]any `json:"facets,omitempty"`
	OutputFacets map[string]any `json:"outputFacets,omitempty"`
}

// Base holds the two members every facet has.
type Base struct {
	Producer  string `json:"_producer"`
	SchemaURL string `json:"_schemaURL"`
}

func base(schemaURL string) Base { return Base{Producer: Producer, SchemaURL: schemaURL} }

// SchemaFacet is the standard "schema" dataset facet.
type SchemaFacet struct {
	Base
	Fields []SchemaField `json:"fields"`
}

// SchemaField is one column of a SchemaFacet; Fields holds a struct's
// members, a list's element or a map's key and value.
type SchemaField struct {
	Name        string        `json:"name"`
	Type        string        `json:"type,omitempty"`
	Description string        `json:"description,omitempty"`
	Fields      []SchemaField `json:"fields,omitempty"`
}

// NewSchemaFacet returns a schema facet of fields.
func NewSchemaFacet(fields []SchemaField) SchemaFacet {
	return SchemaFacet{Base: base(schemaFacetURL), Fields: fields}
}

// OutputStatistics is the standard "outputStatistics" output facet: what a
// run wrote to one dataset.
type OutputStatistics struct {
	Base
	RowCount  int64 `json:"rowCount"`
	Size      int64 `json:"size"`
	FileCount int64 `json:"fileCount"`
}

// NewOutputStatistics returns an outputStatistics facet.
func NewOutputStatistics(rows, bytes, files int64) OutputStatistics {
	return OutputStatistics{Base: base(outputStatisticsFacetURL), RowCount: rows, Size: bytes, FileCount: files}
}

// SnapshotsFacet is the custom "haade_snapshots" output facet: the Iceberg
// snapshots a run committed to a table, oldest first.
type SnapshotsFacet struct {
	Base
	// Snapshots are the committed snapshots, in commit order.
	Snapshots []Snapshot `json:"snapshots"`
	// CurrentSnapshotID is the table's current snapshot when the run ended
	// (0: the table has none).
	CurrentSnapshotID int64 `json:"currentSnapshotId"`
}

// Snapshot is one committed Iceberg snapshot.
type Snapshot struct {
	SnapshotID int64  `json:"snapshotId"`
	Operation  string `json:"operation"`
	// AddedRecords and DeletedRecords are from the snapshot summary.
	AddedRecords   int64 `json:"addedRecords"`
	DeletedRecords int64 `json:"deletedRecords"`
	// TimestampMs is the commit time.
	TimestampMs int64 `json:"timestampMs"`
}

// NewSnapshotsFacet returns a haade_snapshots facet.
func NewSnapshotsFacet(current int64, snaps []Snapshot) SnapshotsFacet {
	if snaps == nil {
		snaps = []Snapshot{}
	}
	return SnapshotsFacet{Base: base(SnapshotsFacetURL), Snapshots: snaps, CurrentSnapshotID: current}
}

// ErrorMessage is the standard "errorMessage" run facet of a FAIL event.
type ErrorMessage struct {
	Base
	Message             string `json:"message"`
	ProgrammingLanguage string `json:"programmingLanguage"`
}

// JobType is the standard "jobType" job facet: batch or streaming.
type JobType struct {
	Base
	ProcessingType string `json:"processingType"`
	Integration    string `json:"integration"`
	JobType        string `json:"jobType"`
}

// ProcessingEngine is the standard "processing_engine" run facet.
type ProcessingEngine struct {
	Base
	Version                   string `json:"version"`
	Name                      string `json:"name"`
	OpenlineageAdapterVersion string `json:"openlineageAdapterVersion,omitempty"`
}

// eventTime is the wire form of an event time: RFC 3339, UTC, milliseconds.
func eventTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// MarshalJSON keeps empty input and output lists as [] (the spec's
// default), never null.
func (e RunEvent) MarshalJSON() ([]byte, error) {
	type plain RunEvent
	if e.Inputs == nil {
		e.Inputs = []InputDataset{}
	}
	if e.Outputs == nil {
		e.Outputs = []OutputDataset{}
	}
	return json.Marshal(plain(e))
}

// CatalogFacet is the standard "catalog" dataset facet: the Iceberg
// catalog that holds a table.
type CatalogFacet struct {
	Base
	Framework    string `json:"framework"`
	Type         string `json:"type"`
	Name         string `json:"name"`
	MetadataURI  string `json:"metadataUri,omitempty"`
	WarehouseURI string `json:"warehouseUri,omitempty"`
	Source       string `json:"source,omitempty"`
}

const catalogFacetURL = "https://openlineage.io/spec/facets/1-1-0/CatalogDatasetFacet.json#/$defs/CatalogDatasetFacet"

// NewCatalogFacet returns the catalog facet of a table of an Iceberg
// catalog of type typ (sql, rest, ...) and name, at its metadata file, in
// the warehouse.
func NewCatalogFacet(typ, name, metadata, warehouse string) CatalogFacet {
	return CatalogFacet{Base: base(catalogFacetURL), Framework: "iceberg", Type: typ, Name: name,
		MetadataURI: metadata, WarehouseURI: warehouse}
}
