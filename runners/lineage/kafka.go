package lineage

import (
	"net"
	"strings"
)

// KafkaTopic is a Kafka topic as an input dataset, named as the OpenLineage
// naming spec says: namespace kafka://host:port of the first bootstrap
// server, name the topic.
func KafkaTopic(brokers []string, topic string) InputDataset {
	ns := "kafka://"
	if len(brokers) > 0 {
		b := strings.TrimSpace(brokers[0])
		if _, _, err := net.SplitHostPort(b); err != nil {
			b = net.JoinHostPort(b, "9092")
		}
		ns += b
	}
	return InputDataset{Namespace: ns, Name: topic}
}
