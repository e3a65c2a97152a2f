package k8s_test

// The analytics images (k8s/base/analytics) are pinned by tag: no registry
// answers this machine to look their digests up.
func init() {
	thirdPartyWithoutDigest["trinodb/trino:476"] = "Trino 476, the release testing/services/trino.sh runs; no digest could be looked up without a registry"
	thirdPartyWithoutDigest["apache/superset:6.1.0"] = "Superset 6.1.0, the release testing/services/superset.sh pins; no digest could be looked up without a registry"
}
