// Package k8se2e is the end-to-end test of HAADE on a real Kubernetes: the
// node of testing/cluster/node.sh (kube-apiserver, kubelet, kube-proxy,
// CoreDNS, containerd), the real Flink Kubernetes operator reconciling the
// FlinkDeployment, and k8s/overlays/node applied as it is, server-side.
//
// It needs the node running and the images built, and runs inside the node's
// network namespace, where Service and pod addresses route:
//
//	testing/cluster/images.sh build
//	.ci/cluster        (starts the node, runs this test, tears it down)
//
// or by hand, with NODE_NETNS naming the node's namespace:
//
//	nsenter --net=/run/netns/$NODE_NETNS env $(testing/cluster/apiserver.sh env | sed 's/^export //') \
//	  go test -tags cluster -count=1 -v -timeout 60m ./testing/k8se2e/
//
// The test is behind the build tag "cluster"; without it the package is empty.
package k8se2e
