package main

import (
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
)

// A clean stop (kafkaio.Stop, on SIGINT or SIGTERM) also makes the last
// windows' offsets durable in both tables, the dead letters' included.
func init() { kafkaio.OnStop(icebergio.Stopping) }
