// Package pods is the pod-topology tier: the dev overlay (k8s/overlays/dev)
// run as podman pods by testing/cluster/pods.sh, one pod per Kubernetes
// pod, and bronze submitted through the job server's pod as the
// bronze-submit Job would submit it.
//
// TestPodsBronze produces into Kafka (TLS, SCRAM-SHA-512, ACLs, as Strimzi
// would run it), runs the submit pod (it must exit 0: --async), checks that
// every record lands exactly once in lakehouse.bronze_events, kills a
// TaskManager pod while producing and restarts it (Flink must restore its
// S3 checkpoint), deletes and recreates the submit pod (no second Flink job
// may start), and checks exactly once again at the end.
//
// It needs root, podman and the images of testing/cluster/images.sh, and
// runs in a network namespace of its own (see .ci/pods):
//
//	nsenter --net=/run/netns/hpods go test -tags pods -count=1 -timeout 40m ./testing/pods/
//
// Without podman or the images it skips, saying why; .ci/pods fails on a skip.
package pods
