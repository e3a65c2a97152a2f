package runners

import (
	"context"
	"testing"
	"time"

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
	mb := FlinkOptions{Unbounded: true, MaxBundleTime: 250 * time.Millisecond}.options()
	if got := mb["beam:option:max_bundle_time_mills:v1"]; got != "250" {
		t.Errorf("max_bundle_time_mills = %v, want 250", got)
	}
	if _, ok := mb["beam:option:pipeline_resources_detector_factory_class:v1"]; ok {
		t.Errorf("the resources detector is set unasked: %v", mb)
	}
	ns := FlinkOptions{NoStagedJars: true}.options()
	if got := ns["beam:option:pipeline_resources_detector_factory_class:v1"]; got != "haade.NoStagedJars" {
		t.Errorf("NoStagedJars: pipeline_resources_detector_factory_class = %v, want haade.NoStagedJars", got)
	}
	if *MaxBundleTimeFlag != DefaultMaxBundleTime {
		t.Errorf("--flink-max-bundle-time defaults to %v, want %v", *MaxBundleTimeFlag, DefaultMaxBundleTime)
	}
}

func TestReachableEndpoint(t *testing.T) {
	for _, c := range []struct{ adv, job, want string }{
		{"0.0.0.0:8098", "beam-jobserver.lakehouse:8099", "beam-jobserver.lakehouse:8098"},
		{"[::]:8098", "10.1.2.3:8099", "10.1.2.3:8098"},
		{":8098", "127.0.0.1:8099", "127.0.0.1:8098"},
		{"10.0.0.7:8098", "beam-jobserver:8099", "10.0.0.7:8098"},
		{"jobserver-0:8098", "127.0.0.1:8099", "jobserver-0:8098"},
	} {
		if got := reachableEndpoint(c.adv, c.job); got != c.want {
			t.Errorf("reachableEndpoint(%q, %q) = %q, want %q", c.adv, c.job, got, c.want)
		}
	}
}

func TestJobNameAndParallelism(t *testing.T) {
	if got := flinkJobName(Options{Name: "bronze"}); got != "bronze" {
		t.Errorf("job name = %q, want the pipeline's name", got)
	}
	if got := flinkParallelism(Options{Parallelism: 8}); got != 8 {
		t.Errorf("parallelism = %d, want the partition count 8", got)
	}
	if got := flinkParallelism(Options{}); got != -1 {
		t.Errorf("parallelism = %d, want -1 (the job server's default)", got)
	}
}

func TestFlinkJobIs(t *testing.T) {
	for _, c := range []struct {
		flink, name string
		want        bool
	}{
		{"bronze", "bronze", true},
		{"bronze-root-1201095924-b01cdc8a", "bronze", true},
		{"bronze-flink-user-1201095924-b01cdc8a", "bronze", true},
		{"bronze-silver", "bronze", false},
		{"bronze-silver-root-1201095924-b01cdc8a", "bronze-silver", true},
		{"bronzeX", "bronze", false},
		{"silver", "bronze", false},
	} {
		if got := flinkJobIs(c.flink, c.name); got != c.want {
			t.Errorf("flinkJobIs(%q, %q) = %v", c.flink, c.name, got)
		}
	}
}

func TestBootCopyDir(t *testing.T) {
	for _, c := range []struct {
		exe, dir string
		ok       bool
	}{
		{"/tmp/bin123456/worker", "/tmp/bin123456", true},
		{"/tmp/bin/worker", "", false},
		{"/tmp/binabc/worker", "", false},
		{"/opt/haade/bronze", "", false},
		{"/tmp/bin1/bronze", "", false},
		{"/var/tmp/bin1/worker", "", false},
	} {
		dir, ok := bootCopyDir(c.exe)
		if dir != c.dir || ok != c.ok {
			t.Errorf("bootCopyDir(%q) = %q, %v; want %q, %v", c.exe, dir, ok, c.dir, c.ok)
		}
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
