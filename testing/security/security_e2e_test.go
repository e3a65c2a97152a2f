//go:build e2e

package security

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/s3io"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/faults/kit"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/minio/madmin-go/v3"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	_ "github.com/uptrace/bun/driver/pgdriver"
)

const (
	topic      = "fintech.debt.raw" // the one topic haade-bronze may read
	partitions = 4
	plainBoot  = "127.0.0.1:9092"
	s3Endpoint = "http://127.0.0.1:9000"
	records    = 3000
)

var (
	root      string
	bronzeBin string
)

func TestMain(m *testing.M) {
	var err error
	if root, err = cmdtest.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins, done := cmdtest.BuildTemp(filepath.Join(root, "pipelines/bronze"))
	bronzeBin = bins[0]
	code := m.Run()
	stopServices()
	done()
	os.Exit(code)
}

// secEnv is what the scripts print about the three least-privilege identities.
type secEnv struct {
	kafka, minioPipe, minioRoot, pg map[string]string
}

var (
	started    bool
	startedEnv secEnv
	toStop     []string
)

// startServices starts PostgreSQL, MinIO and Kafka with its SASL_SSL
// listener, once for the package; what it started is stopped by TestMain
// unless HAADE_KEEP_SERVICES is set.
func startServices(t *testing.T) secEnv {
	t.Helper()
	if !started {
		startedEnv = startOnce(t)
		started = true
	}
	return startedEnv
}

func stopServices() {
	for i := len(toStop) - 1; i >= 0; i-- {
		if _, err := cmdtest.Script(root, nil, toStop[i], "stop"); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

func startOnce(t *testing.T) secEnv {
	t.Helper()
	secure := []string{"KAFKA_SECURE=1"}
	for _, n := range []string{"postgres", "minio", "kafka"} {
		_, err := cmdtest.Script(root, secure, n, "status")
		wasRunning := err == nil
		start := time.Now()
		if _, err := cmdtest.Script(root, secure, n, "start"); err != nil {
			if n != "kafka" || !strings.Contains(err.Error(), "without its SASL_SSL listener") {
				t.Fatal(err)
			}
			// A Kafka started by another test without the listener: restart it with it
			// (restart keeps the data).
			if _, err := cmdtest.Script(root, secure, n, "restart"); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s.sh start: %v", n, time.Since(start).Round(100*time.Millisecond))
		if !wasRunning && os.Getenv("HAADE_KEEP_SERVICES") == "" {
			toStop = append(toStop, n)
		}
	}
	get := func(name, cmd string) map[string]string {
		out, err := cmdtest.Script(root, secure, name, cmd)
		if err != nil {
			t.Fatal(err)
		}
		return kit.ParseExports(out)
	}
	return secEnv{kafka: get("kafka", "secure-env"), minioPipe: get("minio", "pipeline-env"),
		minioRoot: get("minio", "env"), pg: get("postgres", "bronze-env")}
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// saslOpts are franz-go options for the SASL_SSL listener as user.
func saslOpts(t *testing.T, e secEnv, user, pass string) []kgo.Opt {
	t.Helper()
	cfg := kafkaTLS(t, e.kafka["KAFKA_SECURE_CA"])
	return []kgo.Opt{kgo.SeedBrokers(e.kafka["KAFKA_SECURE_BOOTSTRAP"]), kgo.DialTLSConfig(cfg),
		kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()), kgo.RetryTimeout(15 * time.Second)}
}

func value(i int) []byte {
	if i%50 == 49 {
		return event.MalformedCorpus[(i/50)%len(event.MalformedCorpus)]
	}
	return fmt.Appendf(nil, `{"source": "sec", "title": "least privilege #%d", "timestamp": "2026-05-19T10:00:%02dZ"}`, i, i%60)
}

// TestBronzeLeastPrivilege is the whole chain: bronze reads through SASL_SSL
// as haade-bronze, writes MinIO as haade-pipeline and the catalog as
// haade_bronze, and every record lands once.
func TestBronzeLeastPrivilege(t *testing.T) {
	e := startServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// A fresh fintech.debt.raw: ACLs are by name, so they hold for the new topic.
	admin := saslOpts(t, e, e.kafka["KAFKA_ADMIN_USER"], e.kafka["KAFKA_ADMIN_PASSWORD"])
	recreateTopic(ctx, t, admin, topic, partitions)
	keys, err := kit.Produce(ctx, admin, topic, records, value)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("produced %d records to %s as %s over SASL_SSL", len(keys), topic, e.kafka["KAFKA_ADMIN_USER"])

	id := randomID()
	table, dlq := "sec.bronze_"+id, "sec.bronze_"+id+"_dlq"
	catURI := e.pg["HAADE_PG_BRONZE_URL"]
	args := []string{
		"--runner=direct", "--bounded", "--metrics-addr=",
		"--brokers=" + e.kafka["KAFKA_SECURE_BOOTSTRAP"], "--topic=" + topic,
		"--kafka-tls", "--kafka-tls-ca=" + e.kafka["KAFKA_SECURE_CA"],
		"--kafka-sasl-mechanism=SCRAM-SHA-512", "--kafka-sasl-user=" + e.kafka["KAFKA_BRONZE_USER"],
		"--warehouse=s3://warehouse/", "--s3-endpoint=" + s3Endpoint,
		"--catalog-uri=" + catURI,
		"--table=" + table, "--dlq-table=" + dlq, "--pipeline-id=bronze-sec-" + id, "--commit-interval=2s",
	}
	secrets := map[string]string{"the SASL password": e.kafka["KAFKA_BRONZE_PASSWORD"],
		"the S3 secret key": e.minioPipe["AWS_SECRET_ACCESS_KEY"], "the catalog password": pgPassword(t, catURI)}
	env := pipelineEnv(e)
	out := runBronze(t, env, args...)
	for what, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("bronze's output holds %s", what)
		}
	}

	cat := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: catURI, Warehouse: "s3://warehouse/", S3Endpoint: s3Endpoint}
	t.Cleanup(func() { purge(t, e, cat, table, dlq) })
	withEnv(t, e.minioPipe)
	seen, err := kit.Seen(ctx, cat, topic, table, dlq)
	if err != nil {
		t.Fatal(err)
	}
	tally := kit.Compare(keys, seen)
	t.Logf("bronze + dead letters: %v", tally)
	if !tally.OK() {
		t.Errorf("not every record landed once: %v", tally)
	}

	// A second bounded run finds nothing new and changes nothing.
	runBronze(t, env, args...)
	seen, err = kit.Seen(ctx, cat, topic, table, dlq)
	if err != nil {
		t.Fatal(err)
	}
	if tally := kit.Compare(keys, seen); !tally.OK() {
		t.Errorf("after a second run: %v", tally)
	}

	// The same user on a topic it may not read: bronze refuses at start.
	other := "sec-other-" + id
	createTopic(ctx, t, admin, other, 1)
	if _, err := kit.Produce(ctx, admin, other, 10, value); err != nil {
		t.Fatal(err)
	}
	otherArgs := append(append([]string(nil), args...), "--topic="+other, "--table=sec.other_"+id, "--dlq-table=sec.other_"+id+"_dlq")
	if out, err := bronzeCmd(env, otherArgs...).CombinedOutput(); err == nil {
		t.Errorf("bronze read topic %s as %s, which has no ACL for it:\n%s", other, e.kafka["KAFKA_BRONZE_USER"], lastLines(out, 10))
	} else {
		t.Logf("bronze on %s as %s: %v; %s", other, e.kafka["KAFKA_BRONZE_USER"], err, lastLines(out, 1))
	}

	// A wrong SASL password: bronze refuses at start, names SASL and the
	// user, shows no password, and writes nothing. It does not wait.
	const wrong = "not-the-password-" + "x9"
	badEnv := append(append([]string(nil), env[:len(env)-1]...), "HAADE_SASL_PASSWORD="+wrong)
	badArgs := append(append([]string(nil), args...), "--table=sec.badpw_"+id, "--dlq-table=sec.badpw_"+id+"_dlq")
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	cmd := exec.CommandContext(wctx, bronzeBin, badArgs...)
	cmd.Env = badEnv
	badOut, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case wctx.Err() != nil:
		t.Errorf("bronze with a wrong SASL password was still running after 2m:\n%s", lastLines(badOut, 10))
	case !errors.As(err, &exit) || exit.ExitCode() == 0:
		t.Errorf("bronze with a wrong SASL password: %v, want a non-zero exit\n%s", err, lastLines(badOut, 10))
	case !strings.Contains(string(badOut), "SASL") || !strings.Contains(string(badOut), e.kafka["KAFKA_BRONZE_USER"]):
		t.Errorf("bronze with a wrong SASL password: the output names neither SASL nor the user:\n%s", lastLines(badOut, 10))
	default:
		t.Logf("bronze with a wrong SASL password: exit %d; %s", exit.ExitCode(), lastLines(badOut, 1))
	}
	if strings.Contains(string(badOut), wrong) || strings.Contains(string(badOut), e.kafka["KAFKA_BRONZE_PASSWORD"]) {
		t.Errorf("bronze's output shows a password")
	}
	c, err := cat.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if exists, err := c.CheckTableExists(ctx, catalog.ToIdentifier("sec.badpw_"+id)); err != nil || exists {
		t.Errorf("bronze with a wrong SASL password: its table exists: %v (err %v), want nothing written", exists, err)
	}
}

// pipelineEnv is bronze's environment: MinIO's pipeline user, and the SASL
// password where the worker reads it (never on the command line).
func pipelineEnv(e secEnv) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HAADE_") {
			env = append(env, kv)
		}
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		env = append(env, k+"="+e.minioPipe[k])
	}
	return append(env, "HAADE_SASL_PASSWORD="+e.kafka["KAFKA_BRONZE_PASSWORD"])
}

func bronzeCmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bronzeBin, args...)
	cmd.Env = env
	return cmd
}

func runBronze(t *testing.T, env []string, args ...string) string {
	t.Helper()
	start := time.Now()
	cmd := bronzeCmd(env, args...)
	var out cmdtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("bronze: %v\n%s", err, lastLines([]byte(out.String()), 30))
		}
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("bronze did not finish within 4m:\n%s", lastLines([]byte(out.String()), 30))
	}
	t.Logf("bronze --bounded took %v:\n%s", time.Since(start).Round(100*time.Millisecond), summary(out.String()))
	return out.String()
}

// TestKafkaUserMayOnlyRead shows what haade-bronze is refused on the
// SASL_SSL listener, and that a wrong password does not log in.
func TestKafkaUserMayOnlyRead(t *testing.T) {
	e := startServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := saslOpts(t, e, e.kafka["KAFKA_ADMIN_USER"], e.kafka["KAFKA_ADMIN_PASSWORD"])
	createTopic(ctx, t, admin, topic, partitions)
	other := "sec-other-" + randomID()
	createTopic(ctx, t, admin, other, 1)
	t.Cleanup(func() { deleteTopic(t, admin, other) })
	if _, err := kit.Produce(ctx, admin, other, 5, value); err != nil {
		t.Fatal(err)
	}
	bronze := saslOpts(t, e, e.kafka["KAFKA_BRONZE_USER"], e.kafka["KAFKA_BRONZE_PASSWORD"])

	// Allowed: describe and list offsets of its topic, commit a bronze* group's offsets.
	cl := newClient(t, bronze)
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("haade-bronze cannot list the end offsets of %s: %v", topic, err)
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 0})
	if resp, err := adm.CommitOffsets(ctx, "bronze-sec-check", offs); err != nil || resp.Error() != nil {
		t.Errorf("haade-bronze cannot commit offsets of group bronze-sec-check: %v %v", err, resp.Error())
	}

	cases := []struct {
		name string
		do   func() error
		want *kerr.Error
	}{
		{"produce to " + topic, func() error {
			pc := newClient(t, append(bronze, kgo.RecordRetries(1), kgo.DisableIdempotentWrite()))
			return pc.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(`{}`)}).FirstErr()
		}, kerr.TopicAuthorizationFailed},
		{"list offsets of " + other, func() error {
			r, err := adm.ListEndOffsets(ctx, other)
			if err != nil {
				return err
			}
			return r.Error()
		}, kerr.TopicAuthorizationFailed},
		{"fetch from " + other, func() error {
			fc := newClient(t, append(bronze, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{other: {0: kgo.NewOffset().AtStart()}})))
			fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			for fctx.Err() == nil {
				fs := fc.PollFetches(fctx)
				if errs := fs.Errors(); len(errs) > 0 && !errors.Is(errs[0].Err, context.DeadlineExceeded) {
					return errs[0].Err
				}
				if fs.NumRecords() > 0 {
					return nil
				}
			}
			return nil
		}, kerr.TopicAuthorizationFailed},
		{"create a topic", func() error {
			r, err := adm.CreateTopic(ctx, 1, 1, nil, "sec-new-"+randomID())
			if err != nil {
				return err
			}
			return r.Err
		}, kerr.TopicAuthorizationFailed},
		{"commit offsets of group other", func() error {
			resp, err := adm.CommitOffsets(ctx, "other-group", offs)
			if err != nil {
				return err
			}
			return resp.Error()
		}, kerr.GroupAuthorizationFailed},
		{"delete " + topic, func() error {
			r, err := adm.DeleteTopic(ctx, topic)
			if err != nil {
				return err
			}
			return r.Err
		}, kerr.TopicAuthorizationFailed},
		{"log in with a wrong password", func() error {
			wc := newClient(t, saslOpts(t, e, e.kafka["KAFKA_BRONZE_USER"], "not-the-password"))
			_, err := kadm.NewClient(wc).ListTopics(ctx)
			return err
		}, kerr.SaslAuthenticationFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if !errors.Is(err, c.want) {
				t.Errorf("haade-bronze: %s: got %v, want %s", c.name, err, c.want.Message)
			} else {
				t.Logf("refused: %v", err)
			}
		})
	}
}

// TestMinIOUserOnlyWarehouse shows that haade-pipeline can use the
// warehouse bucket and nothing else.
func TestMinIOUserOnlyWarehouse(t *testing.T) {
	e := startServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rootCl := minioClient(t, e.minioRoot)
	pipe := minioClient(t, e.minioPipe)
	other := "sec-other-" + randomID()
	if err := rootCl.MakeBucket(ctx, other, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rootCl.PutObject(ctx, other, "secret.txt", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rootCl.RemoveObject(context.Background(), other, "secret.txt", minio.RemoveObjectOptions{})
		_ = rootCl.RemoveBucket(context.Background(), other)
	})

	if err := s3io.CheckWritable(ctx, s3io.Config{Endpoint: s3Endpoint, AccessKey: e.minioPipe["AWS_ACCESS_KEY_ID"],
		SecretKey: e.minioPipe["AWS_SECRET_ACCESS_KEY"]}, "warehouse", "sec-probe"); err != nil {
		t.Fatalf("haade-pipeline cannot write the warehouse bucket: %v", err)
	}
	denied := []struct {
		name string
		do   func() error
	}{
		{"get an object of " + other, func() error {
			o, err := pipe.GetObject(ctx, other, "secret.txt", minio.GetObjectOptions{})
			if err != nil {
				return err
			}
			_, err = o.Stat()
			return err
		}},
		{"put an object in " + other, func() error {
			_, err := pipe.PutObject(ctx, other, "x.txt", strings.NewReader("x"), 1, minio.PutObjectOptions{})
			return err
		}},
		{"list " + other, func() error {
			for o := range pipe.ListObjects(ctx, other, minio.ListObjectsOptions{}) {
				return o.Err
			}
			return nil
		}},
		{"create a bucket", func() error { return pipe.MakeBucket(ctx, "sec-new-"+randomID(), minio.MakeBucketOptions{}) }},
		{"delete the warehouse bucket", func() error { return pipe.RemoveBucket(ctx, "warehouse") }},
		{"set the warehouse bucket's policy", func() error { return pipe.SetBucketPolicy(ctx, "warehouse", `{"Version":"2012-10-17","Statement":[]}`) }},
		{"create a user (admin API)", func() error {
			adm, err := madmin.NewWithOptions("127.0.0.1:9000", &madmin.Options{Creds: credentials.NewStaticV4(e.minioPipe["AWS_ACCESS_KEY_ID"], e.minioPipe["AWS_SECRET_ACCESS_KEY"], "")})
			if err != nil {
				return err
			}
			return adm.AddUser(ctx, "sec-intruder", "intruder-secret")
		}},
	}
	for _, c := range denied {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			code := minio.ToErrorResponse(err).Code
			if code == "" {
				code = madmin.ToErrorResponse(err).Code
			}
			if code != "AccessDenied" {
				t.Errorf("haade-pipeline: %s: got %v (code %q), want AccessDenied", c.name, err, code)
			} else {
				t.Logf("refused: %v", err)
			}
		})
	}
}

// TestPostgresRoleIsNoSuperuser shows what haade_bronze is refused.
func TestPostgresRoleIsNoSuperuser(t *testing.T) {
	e := startServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := e.pg["HAADE_PG_BRONZE_URL"]
	db, err := sql.Open("pg", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var super, createDB, createRole bool
	if err := db.QueryRowContext(ctx, `SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user`).Scan(&super, &createDB, &createRole); err != nil {
		t.Fatal(err)
	}
	if super || createDB || createRole {
		t.Errorf("haade_bronze: superuser %v, createdb %v, createrole %v; want all false", super, createDB, createRole)
	}
	var owned []string
	rows, err := db.QueryContext(ctx, `SELECT schemaname || '.' || tablename FROM pg_tables WHERE tableowner = current_user ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		owned = append(owned, s)
	}
	rows.Close()
	t.Logf("haade_bronze owns %v", owned)
	for _, o := range owned {
		if o != "haade_bronze.iceberg_tables" && o != "haade_bronze.iceberg_namespace_properties" {
			t.Errorf("haade_bronze owns %s, beyond the catalog's two tables", o)
		}
	}
	for _, c := range []struct{ name, stmt, want string }{
		{"create a database", `CREATE DATABASE sec_intruder`, "permission denied to create database"},
		{"create a role", `CREATE ROLE sec_intruder`, "permission denied to create role"},
		{"read password hashes", `SELECT rolpassword FROM pg_authid`, "permission denied"},
		{"create a table in public", `CREATE TABLE public.sec_intruder (a int)`, "permission denied for schema public"},
		{"read server files", `SELECT pg_read_file('postgresql.conf')`, "permission denied"},
		{"become superuser", `ALTER ROLE current_user SUPERUSER`, "must be superuser"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := db.ExecContext(ctx, c.stmt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("haade_bronze: %s: got %v, want %q", c.name, err, c.want)
			} else {
				t.Logf("refused: %v", err)
			}
		})
	}
	// Another database of the cluster is closed to it.
	other, err := sql.Open("pg", strings.Replace(url, "/lakehouse_bronze?", "/lakehouse?", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "CONNECT privilege") && !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("haade_bronze connecting to database lakehouse: %v, want permission denied", err)
	}
}

func pgPassword(t *testing.T, uri string) string {
	t.Helper()
	u, err := neturl.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := u.User.Password()
	return p
}

func newClient(t *testing.T, opts []kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(ctx context.Context, t *testing.T, admin []kgo.Opt, name string, parts int32) {
	t.Helper()
	r, err := kadm.NewClient(newClient(t, admin)).CreateTopic(ctx, parts, 1, nil, name)
	if err == nil {
		err = r.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

func deleteTopic(t *testing.T, admin []kgo.Opt, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(newClient(t, admin)).DeleteTopic(ctx, name); err != nil {
		t.Logf("delete topic %s: %v", name, err)
	}
}

// recreateTopic deletes name if it exists and creates it anew, waiting
// until the deletion has gone through.
func recreateTopic(ctx context.Context, t *testing.T, admin []kgo.Opt, name string, parts int32) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, admin))
	if _, err := adm.DeleteTopic(ctx, name); err != nil {
		t.Fatal(err)
	}
	for {
		r, err := adm.CreateTopic(ctx, parts, 1, nil, name)
		if err == nil {
			err = r.Err
		}
		if err == nil {
			return
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) {
			t.Fatalf("create topic %s: %v", name, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s still exists after its deletion", name)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func minioClient(t *testing.T, env map[string]string) *minio.Client {
	t.Helper()
	cl, err := minio.New("127.0.0.1:9000", &minio.Options{Creds: credentials.NewStaticV4(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// withEnv sets the AWS_* variables of env for this test: the readers of
// icebergio take the S3 credentials from there.
func withEnv(t *testing.T, env map[string]string) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		t.Setenv(k, env[k])
	}
}

// purge drops the tables and their files, on success only.
func purge(t *testing.T, e secEnv, cat icebergio.CatalogConfig, idents ...string) {
	if t.Failed() {
		t.Logf("kept tables %v for inspection", idents)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		os.Setenv(k, e.minioRoot[k])
	}
	c, err := cat.Open(ctx)
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	if err := icebergtest.Purge(ctx, c, s3Endpoint, idents...); err != nil {
		t.Logf("cleanup: %v", err)
	}
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// summary is what a bounded run prints on stdout, without the log lines.
func summary(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.Contains(l, "level=") && !bytes.HasPrefix([]byte(l), []byte("{")) {
			keep = append(keep, "  "+l)
		}
	}
	return strings.Join(keep, "\n")
}
