package runners

import (
	"context"
	"testing"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestFlinkOptions(t *testing.T) {
	un := FlinkOptions{Unbounded: true}.options()
	if got := un["beam:option:shutdown_sources_after_idle_ms:v1"]; got != "9223372036854775807" {
		t.Errorf("unbounded: shutdown_sources_after_idle_ms = %v, want never (MaxInt64)", got)
	}
	if un["beam:option:streaming:v1"] != true || un["beam:option:finish_bundle_before_checkpointing:v1"] != true {
		t.Errorf("unbounded: want streaming and finish_bundle_before_checkpointing, got %v", un)
	}
	b := FlinkOptions{}.options()
	if got := b["beam:option:shutdown_sources_after_idle_ms:v1"]; got != "0" || len(b) != 1 {
		t.Errorf("bounded: got %v, want only shutdown_sources_after_idle_ms=0", b)
	}
}

type prepareRecorder struct {
	jobpb.JobServiceClient
	req *jobpb.PrepareJobRequest
}

func (r *prepareRecorder) Prepare(_ context.Context, req *jobpb.PrepareJobRequest, _ ...grpc.CallOption) (*jobpb.PrepareJobResponse, error) {
	r.req = req
	return &jobpb.PrepareJobResponse{}, nil
}

func TestExtraOptionsClientKeepsTheGoOptions(t *testing.T) {
	rec := &prepareRecorder{}
	c := extraOptionsClient{rec, FlinkOptions{Unbounded: true}.options()}
	opts, err := structpb.NewStruct(map[string]any{"beam:option:app_name:v1": "bronze"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(context.Background(), &jobpb.PrepareJobRequest{PipelineOptions: opts}); err != nil {
		t.Fatal(err)
	}
	f := rec.req.GetPipelineOptions().GetFields()
	if f["beam:option:app_name:v1"].GetStringValue() != "bronze" {
		t.Errorf("the SDK's own options were lost: %v", f)
	}
	if f["beam:option:streaming:v1"].GetBoolValue() != true ||
		f["beam:option:shutdown_sources_after_idle_ms:v1"].GetStringValue() != "9223372036854775807" {
		t.Errorf("extra options missing: %v", f)
	}
}

func TestValidateFlinkNeedsEndpoint(t *testing.T) {
	if err := Validate("flink", ""); err == nil {
		t.Error("flink without --endpoint: want an error")
	}
}
