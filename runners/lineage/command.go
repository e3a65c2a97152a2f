package lineage

import (
	"context"
	"fmt"
)

// Command is the lineage of one run of a pipeline command. Its main makes
// it once the flags are valid, calls Start once the pipeline is built, Failed
// with the error it exits on, and End with its exit code, which emits the
// last event and closes the emitter. A nil Command does nothing.
type Command struct {
	// Emitter sends the events; nil: lineage is off.
	Emitter *Emitter
	// Job names the pipeline.
	Job Job
	// Inputs are datasets read besides InputTables, such as a Kafka topic.
	// Set them before Start.
	Inputs []InputDataset
	// InputTables and OutputTables are the tables read and written
	// (icetables.Of for Iceberg's); nil: none.
	InputTables, OutputTables Tables
	// Detached says that a successful exit leaves the job running without
	// this process (a Flink job submitted with --async): End then emits
	// RUNNING, not COMPLETE.
	Detached bool
	// Secrets are values never to show in a FAIL message, besides those of
	// Redact's variables (a SASL password given as a flag).
	Secrets []string

	run *Run
	err error
}

// Tables are the datasets of the tables a run reads or writes, read from
// their catalog when the run starts and again when it ends.
type Tables interface {
	// Inputs are the tables as input datasets.
	Inputs(ctx context.Context) []InputDataset
	// Outputs are the tables as output datasets, as the run starts.
	Outputs(ctx context.Context) []OutputDataset
	// Committed are the tables as output datasets with what the run
	// committed to each since Outputs.
	Committed(ctx context.Context) []OutputDataset
}

// Start emits START, once.
func (c *Command) Start(ctx context.Context) {
	if c == nil || c.run != nil {
		return
	}
	inputs := append([]InputDataset{}, c.Inputs...)
	if c.InputTables != nil {
		inputs = append(inputs, c.InputTables.Inputs(ctx)...)
	}
	var outputs []OutputDataset
	if c.OutputTables != nil {
		outputs = c.OutputTables.Outputs(ctx)
	}
	c.run = c.Emitter.Start(ctx, c.Job, inputs, outputs)
}

// Failed records the error the command is about to exit on, for FAIL.
func (c *Command) Failed(err error) {
	if c != nil && c.err == nil {
		c.err = err
	}
}

// End emits the run's last event for the command's exit code: COMPLETE for
// 0 (RUNNING when Detached), ABORT for 130 (stopped by a signal), FAIL
// otherwise, with the error given to Failed. A run that failed before Start
// gets its START first. Then it closes the emitter, waiting a bounded time
// for an HTTP endpoint.
func (c *Command) End(ctx context.Context, code int) {
	if c == nil || c.Emitter == nil {
		return
	}
	var outputs []OutputDataset // nil: the outputs of START
	if c.run == nil {
		// It failed before it was built (a catalog or broker out of
		// reach): nothing was committed, and the catalog is read once.
		c.Start(ctx)
	} else if c.OutputTables != nil {
		outputs = c.OutputTables.Committed(ctx)
	}
	switch {
	case code == 0 && c.Detached:
		c.run.Running(ctx)
	case code == 0:
		c.run.Complete(ctx, outputs)
	case code == 130:
		c.run.Abort(ctx, outputs)
	default:
		err := c.err
		if err == nil {
			err = fmt.Errorf("exit status %d", code)
		}
		if len(c.Secrets) > 0 {
			err = fmt.Errorf("%s", Redact(err.Error(), c.Secrets...))
		}
		c.run.Fail(ctx, err, outputs)
	}
	_ = c.Emitter.Close(ctx)
}
