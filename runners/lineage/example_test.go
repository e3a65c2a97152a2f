package lineage_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/haade/haade/runners/lineage"
)

// A pipeline run emits START, then COMPLETE with what it committed.
func Example() {
	dir, _ := os.MkdirTemp("", "lineage")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.ndjson")

	em, err := lineage.Open("file://" + path) // --lineage=file:///.../events.ndjson
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	in := []lineage.InputDataset{lineage.KafkaTopic([]string{"127.0.0.1:9092"}, "fintech.debt.raw")}
	out := []lineage.OutputDataset{{Namespace: "s3://warehouse", Name: "lakehouse.bronze_events"}}
	run := em.Start(ctx, lineage.Job{Name: "bronze"}, in, out)
	// ... the pipeline runs ...
	out[0].OutputFacets = map[string]any{"outputStatistics": lineage.NewOutputStatistics(4961, 81920, 1)}
	run.Complete(ctx, out)
	em.Close(ctx)

	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev lineage.RunEvent
		_ = json.Unmarshal(sc.Bytes(), &ev)
		fmt.Println(ev.EventType, ev.Job.Namespace+"/"+ev.Job.Name, ev.Inputs[0].Namespace, ev.Inputs[0].Name, "->", ev.Outputs[0].Name, ev.Run.RunID == run.ID())
	}
	// Output:
	// START haade/bronze kafka://127.0.0.1:9092 fintech.debt.raw -> lakehouse.bronze_events true
	// COMPLETE haade/bronze kafka://127.0.0.1:9092 fintech.debt.raw -> lakehouse.bronze_events true
}
