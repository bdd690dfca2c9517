// Package shardenv reads a distributed replay's shard identity from the environment the
// deployment gives each shard when its flags do not: Kubernetes' Indexed Job
// (JOB_COMPLETION_INDEX, with LLMBENCH_SHARD_COUNT), Slurm's srun (SLURM_PROCID,
// SLURM_NTASKS), and, when several srun tasks share one node unbound, the task's part of the
// node's CPUs (SLURM_LOCALID of SLURM_STEP_TASKS_PER_NODE). Its errors name the flag or the
// variable a bad value came from; the rule a shard identity obeys is replay/schedule's
// (CheckShard), worded here for where the identity came from.
//
// It takes the flags' values as typed arguments and the environment as a function, so the
// command only wires flags to it. It imports replay/schedule (the identity rule) and the
// standard library only: never pflag, replay itself, or anything above.
package shardenv
