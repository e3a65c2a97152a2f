package main

import (
	"bytes"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/testing/chart"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/transforms/tables"
)

func TestParseArgsRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--events=0"}, "--events=0"},
		{[]string{"--contenders=bronze,storm"}, `--contenders: unknown "storm"`},
		{[]string{"--freshness", "--contenders=flink"}, "flink runs a bounded backlog only"},
		{[]string{"--freshness", "--contenders=native"}, "native runs a bounded backlog only"},
		{[]string{"--contenders=native", "--timestamps=mixed"}, "native needs --timestamps=utc"},
		{[]string{"--flink-bundle-time=-1s"}, "--flink-bundle-time=-1s"},
		{[]string{"--commit-interval=10ms"}, "--commit-interval=10ms"},
		{[]string{"--namespace=a.b"}, "--namespace"},
		{[]string{"--repeat=0"}, "--repeat=0"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := parseArgs(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
	c, err := parseArgs([]string{"--contenders=spark, bronze", "--events=10"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spark", "bronze"}, c.Contenders); diff != "" {
		t.Errorf("contenders (-want +got):\n%s", diff)
	}
	c, err = parseArgs([]string{"--contenders=bronze,flink", "--flink-bundle-time=100ms"})
	if err != nil {
		t.Fatalf("--contenders=bronze,flink: %v", err)
	}
	if diff := cmp.Diff([]string{"bronze", "flink"}, c.Contenders); diff != "" {
		t.Errorf("contenders (-want +got):\n%s", diff)
	}
	if c.FlinkBundleTime != 100*time.Millisecond {
		t.Errorf("--flink-bundle-time=100ms gave %v", c.FlinkBundleTime)
	}
	if _, ok := contenderByName["flink"]; !ok || !contenderByName["flink"].bounded {
		t.Errorf("the flink contender is missing or not bounded")
	}
	c, err = parseArgs([]string{"--contenders=flink,native"})
	if err != nil {
		t.Fatalf("--contenders=flink,native: %v", err)
	}
	if diff := cmp.Diff([]string{"flink", "native"}, c.Contenders); diff != "" {
		t.Errorf("contenders (-want +got):\n%s", diff)
	}
	// The native contender is a streaming job, stopped by cancelling it:
	// bounded, Iceberg's FlinkSink loses end-of-input files (native.go).
	if n, ok := contenderByName["native"]; !ok || n.bounded || n.stop == nil || n.health == nil || n.prepare == nil {
		t.Errorf("the native contender is missing, bounded, or without its stop, health check or table")
	}
	for _, name := range []string{"bronze", "flink", "native", "spark", "connect"} {
		if labels[name] == "" || colorOf[name] == (color.RGBA{}) || !slices.Contains(contenderOrder, name) {
			t.Errorf("contender %s has no label, colour or place in the table", name)
		}
	}
}

// TestNativeSQL checks the native contender's Flink SQL: the run's topic
// read from its start to its end at the job's start, a checkpoint (so an
// Iceberg commit) every commit interval, the partition count's
// parallelism, the catalog bronze's is (JdbcCatalog "local" on the same
// PostgreSQL, V1 layout, S3FileIO on MinIO), and an INSERT into the run's
// table with bronze's columns, the client waiting for the job's end.
func TestNativeSQL(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "minioadmin")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "miniosecret")
	t.Setenv("AWS_REGION", "us-east-1")
	e := &env{cfg: Config{CommitInterval: 1500 * time.Millisecond, Partitions: 8}, topic: "sidebyside-abc123"}
	r := trial{env: e, name: "sidebyside-native_abc123_1", table: "sidebyside.native_abc123_1", dir: t.TempDir()}
	sql, err := nativeSQL(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SET 'pipeline.name' = 'sidebysidenativeabc1231';",
		"SET 'parallelism.default' = '8';",
		"SET 'execution.checkpointing.interval' = '1500ms';",
		"SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';",
		"SET 'table.dml-sync' = 'true';",
		"CREATE CATALOG `local` WITH (",
		"'catalog-impl' = 'org.apache.iceberg.jdbc.JdbcCatalog'",
		"'uri' = 'jdbc:postgresql://127.0.0.1:5432/lakehouse'",
		"'jdbc.user' = 'haade'", "'jdbc.password' = 'haade'", "'jdbc.schema-version' = 'V1'",
		"'warehouse' = 's3://warehouse/'", "'io-impl' = 'org.apache.iceberg.aws.s3.S3FileIO'",
		"'s3.endpoint' = 'http://127.0.0.1:9000'", "'s3.access-key-id' = 'minioadmin'", "'s3.secret-access-key' = 'miniosecret'",
		"'topic' = 'sidebyside-abc123'", "'properties.bootstrap.servers' = '127.0.0.1:9092'",
		"'scan.startup.mode' = 'earliest-offset'",
		"'format' = 'json'", "'json.timestamp-format.standard' = 'ISO-8601'", "'json.ignore-parse-errors' = 'false'",
		"kafka_partition INT METADATA FROM 'partition' VIRTUAL", "kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL",
		"INSERT INTO `local`.`sidebyside`.`native_abc123_1`",
		"CURRENT_TIMESTAMP, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp, kafka_timestamp_type\nFROM kafka_events;",
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("the script lacks %q:\n%s", want, sql)
		}
	}
	if strings.Contains(sql, "scan.bounded.mode") {
		t.Errorf("the script bounds the Kafka source; Iceberg's FlinkSink then loses the files of writers that end between checkpoints:\n%s", sql)
	}
	// Every column of the INSERT is one of bronze's.
	cols, err := rows.SchemaOf(tables.Bronze.Row)
	if err != nil {
		t.Fatal(err)
	}
	_, insert, _ := strings.Cut(sql, "INSERT INTO")
	list := insert[strings.Index(insert, "(")+1 : strings.Index(insert, ")")]
	for _, c := range strings.Split(list, ",") {
		c = strings.Trim(strings.TrimSpace(c), "`")
		if _, ok := cols.FindFieldByName(c); !ok {
			t.Errorf("the INSERT writes %q, which bronze's table has not", c)
		}
	}
	// A quote in a value would end the string it is in.
	e.topic = "it's"
	if _, err := nativeSQL(r); err == nil || !strings.Contains(err.Error(), "quote") {
		t.Errorf("a topic with a quote gave %v, want an error", err)
	}
	cmd, err := nativeCommand(r)
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(cmd.Args, " "); !strings.HasSuffix(args, "testing/services/flinknative.sh sql-client -f "+filepath.Join(r.dir, "native.sql")) {
		t.Errorf("native command %q: want flinknative.sh sql-client -f the run's script", args)
	}
}

// TestFlinkCommand checks the flink contender's submission: bounded, on
// the cluster's job server with its REST API, PROCESS workers running the
// static binary, the bundle time only when given, and a job name Beam
// keeps as it is.
func TestFlinkCommand(t *testing.T) {
	e := &env{cfg: Config{CommitInterval: 2 * time.Second}, topic: "sidebyside-abc123",
		flink: &flinkStack{endpoint: "127.0.0.1:8099", rest: "http://127.0.0.1:8081", boot: "/cache/boot", workerCmd: "/repo/worker-process.sh", bin: "/tmp/x/bronze"}}
	r := trial{env: e, name: "sidebyside-flink_abc123_2", table: "sidebyside.flink_abc123_2", dlq: "sidebyside.flink_abc123_2_dlq", dir: t.TempDir()}
	t.Setenv("AWS_ACCESS_KEY_ID", "minioadmin")
	cmd, err := flinkCommand(r)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(cmd.Args, " ")
	for _, want := range []string{"/tmp/x/bronze --runner=flink --bounded ", "--endpoint=127.0.0.1:8099", "--flink-rest=http://127.0.0.1:8081",
		"--job_name=sidebysideflinkabc1232 ", "--environment_type=PROCESS", `"command":"/repo/worker-process.sh"`, `"HAADE_FLINK_BOOT":"/cache/boot"`,
		`"AWS_ACCESS_KEY_ID":"minioadmin"`, "--worker_binary=/tmp/x/bronze", "--topic=sidebyside-abc123", "--table=sidebyside.flink_abc123_2 ",
		"--dlq-table=sidebyside.flink_abc123_2_dlq", "--commit-interval=2s", `"HAADE_CATALOG_PASSWORD_FILE":"` + r.dir + `/catalog-password"`} {
		if !strings.Contains(args, want) {
			t.Errorf("flink command lacks %q:\n%s", want, args)
		}
	}
	// The catalog's password is in the workers' file, not in the
	// environment (a pipeline option); bronze cuts it from the URI it ships.
	for _, a := range cmd.Args {
		if strings.HasPrefix(a, "--environment_config=") && strings.Contains(a, "haade@") || strings.Contains(a, `"HAADE_CATALOG_PASSWORD"`) {
			t.Errorf("the catalog password is in the workers' environment: %s", a)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.dir, "catalog-password")); err != nil || string(b) != "haade" {
		t.Errorf("the workers' password file holds %q (%v), want the catalog's", b, err)
	}
	for _, not := range []string{"--flink-max-bundle-time", "--flink-cluster-classpath"} {
		if strings.Contains(args, not) {
			t.Errorf("the command has %s, unasked: %s", not, args)
		}
	}
	e.cfg.FlinkBundleTime = 100 * time.Millisecond
	e.flink.beamClasspath = true
	cmd, _ = flinkCommand(r)
	args = strings.Join(cmd.Args, " ")
	for _, want := range []string{"--flink-max-bundle-time=100ms", "--flink-cluster-classpath"} {
		if !strings.Contains(args, want) {
			t.Errorf("the command lacks %s: %s", want, args)
		}
	}
}

// TestMeterTreesCountsFromTheStart meters a process that burnt CPU before
// the meter started, as Flink's JVMs have: only what it burns after counts.
func TestMeterTreesCountsFromTheStart(t *testing.T) {
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo burnt; sleep 0.5`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	before, _ := readStat(cmd.Process.Pid)
	if before.cpu < 100*time.Millisecond {
		t.Skipf("the loop burnt only %v: too fast a machine to tell", before.cpu)
	}
	m := meterTrees([]int{cmd.Process.Pid}, 20*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	cpu, rss := m.Stop()
	if cpu >= 50*time.Millisecond {
		t.Errorf("metered %v for a process that slept (it had burnt %v before): its past counted", cpu, before.cpu)
	}
	if rss <= 0 {
		t.Errorf("peak RSS %d: want the shell's", rss)
	}
}

func report() Report {
	return Report{
		Date: "2026-11-29T17:00:00Z", Machine: "2 cores", Events: 2_000_000, Partitions: 8, CommitInterval: "2s",
		Results: []Result{
			{Contender: "spark", Run: 1, EventsPerSecond: 50_000, VisibleSeconds: 40, CPUSeconds: 70, PeakRSSBytes: 1 << 30},
			{Contender: "bronze", Run: 1, EventsPerSecond: 400_000, VisibleSeconds: 5, CPUSeconds: 3, CoresMedian: 1.8, PeakRSSBytes: 400 << 20},
			{Contender: "bronze", Run: 2, EventsPerSecond: 500_000, VisibleSeconds: 4, CPUSeconds: 2, CoresMedian: 1.7, PeakRSSBytes: 300 << 20},
			{Contender: "bronze", Run: 3, EventsPerSecond: 100_000, VisibleSeconds: 20, CPUSeconds: 9, CoresMedian: 1.9, PeakRSSBytes: 500 << 20},
			{Contender: "spark", Run: 2, EventsPerSecond: 40_000, VisibleSeconds: 50, CPUSeconds: 80, PeakRSSBytes: 2 << 30},
		},
	}
}

func TestSummarizeTakesMediansInOrder(t *testing.T) {
	got := summarize(report())
	if len(got) != 2 || got[0].name != "bronze" || got[1].name != "spark" {
		t.Fatalf("summaries %+v: want bronze then spark", got)
	}
	b, s := got[0], got[1]
	if b.runs != 3 || b.eventsPerS != 400_000 || b.visibleS != 5 || b.cpuS != 3 || b.peakRSSMiB != 400 {
		t.Errorf("bronze summary %+v: want the medians 400000 events/s, 5 s, 3 CPU s, 400 MiB", b)
	}
	if s.eventsPerS != 45_000 || s.peakRSSMiB != 1536 {
		t.Errorf("spark summary %+v: want the means of two, 45000 events/s and 1536 MiB", s)
	}
	if want := 400_000.0 / 45_000; b.factor != want || s.factor != 1 {
		t.Errorf("factors %v, %v: want %v and 1", b.factor, s.factor, want)
	}
	if b.cpuPerWall != 0.5 {
		t.Errorf("bronze CPU s per wall s %v: want the median of 0.6, 0.5 and 0.45", b.cpuPerWall)
	}
	md := markdown(report())
	for _, want := range []string{"| HAADE bronze (Beam Go, Prism) | 3 | 400,000 | 8.9× | 5.0 s |", "| Spark 3.5 Structured Streaming | 2 | 45,000 | 1.0× |",
		"| 0.50 | 1.80 | 400 MiB |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestChartBarsFollowTheFigures decodes the PNG and measures the first
// panel's bars (events/s): bronze's must be the full width and Spark's
// 45000/400000 of it.
func TestChartBarsFollowTheFigures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	if err := writeChart(path, report()); err != nil {
		t.Fatal(err)
	}
	img, err := chart.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// The length of the run of a colour along the row through a bar's middle.
	barLen := func(name string, bar int) int {
		c := colorOf[name]
		y := margin + headerH + panelTop + bar*(barH+barGap) + barH/2
		n := 0
		for x := 0; x < chartW/2; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(b>>8) == c.B {
				n++
			}
		}
		return n
	}
	bronze, spark := barLen("bronze", 0), barLen("spark", 1)
	if bronze < 100 {
		t.Fatalf("bronze's bar is %d px long: not drawn", bronze)
	}
	if want := float64(bronze) * 45_000 / 400_000; float64(spark) < want-2 || float64(spark) > want+2 {
		t.Errorf("spark's bar is %d px, want about %.0f (bronze's is %d)", spark, want, bronze)
	}
}

// TestMeterTreeCountsChildren runs a shell whose child burns CPU and holds
// memory, and checks that the meter saw both.
func TestMeterTreeCountsChildren(t *testing.T) {
	// The child: a shell loop, then a sleep so the tree is still there to sample.
	cmd := exec.Command("sh", "-c", `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 0.3'; sleep 0.2`)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := meterTree(cmd.Process.Pid, 20*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	cpu, rss := m.Stop()
	// wait4's usage covers the shell and the child it reaped.
	self := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	// The parent shell itself barely runs: most of the CPU is the child's.
	if cpu < 100*time.Millisecond || cpu < self/2 {
		t.Errorf("metered CPU %v: want at least 100ms and half of the %v the kernel reports for the tree", cpu, self)
	}
	if rss < 1<<20 {
		t.Errorf("peak RSS %d bytes: want at least 1 MiB for two shells", rss)
	}
}

// TestVersionsReadsThePins reads the pinned versions out of the real
// service scripts, in each of the forms they use.
func TestVersionsReadsThePins(t *testing.T) {
	root, err := cmdtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	v := (&env{root: root}).versions()
	for _, k := range []string{"kafka.kafka_version", "minio.minio_version", "python.pyspark_version", "python.iceberg_version", "connect.connect_version", "connect.iceberg_version"} {
		if got := v[k]; got == "" || strings.ContainsAny(got, "${}\"") {
			t.Errorf("versions[%q] = %q, want the pinned version", k, got)
		}
	}
	if got := v["kafka.kafka_version"]; !strings.Contains(got, ".") {
		t.Errorf("kafka version %q: not a version", got)
	}
}

// TestCoresBySecondAddUp meters a shell that spins on one core for two
// seconds, then sleeps. Whatever else loads the machine, the cores of its
// whole seconds add up to the CPU time the kernel charged it, no second
// holds more than one core (it has one thread), and the machine's cores
// include its own. TestCoresMedian, which needs an idle core to find about
// one in the median second, is behind the idlecore tag: CI runs it alone.
func TestCoresBySecondAddUp(t *testing.T) {
	cmd := exec.Command("sh", "-c", `timeout 2 sh -c 'while :; do :; done'; sleep 1.2`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := meterTrees([]int{cmd.Process.Pid}, 50*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	charged := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	by := m.coresBySecond()
	if len(by) < 2 {
		t.Fatalf("cores by second %v: want at least the spin's two seconds", by)
	}
	sum := 0.0
	for i, c := range by {
		if c < 0 || c > 1.1 {
			t.Errorf("second %d of %v: %.2f cores, want at most one", i, by, c)
		}
		sum += c
	}
	// The meter samples every 50 ms: a process's CPU after its last sample
	// is not seen, and the last, partial second is left out.
	if sum < charged-0.25 || sum > charged+0.05 {
		t.Errorf("cores by second %v add up to %.2f s; the kernel charged the tree %.2f s", by, sum, charged)
	}
	mach := m.machineCoresBySecond()
	if len(mach) != len(by) {
		t.Fatalf("machine cores by second %v, the tree's %v: want as many seconds", mach, by)
	}
	for i := range by {
		if mach[i] < by[i]-0.05 || mach[i] > float64(runtime.NumCPU())+0.05 {
			t.Errorf("second %d: the machine kept %.2f cores busy and the tree %.2f: want at least the tree's, at most %d", i, mach[i], by[i], runtime.NumCPU())
		}
	}
}
