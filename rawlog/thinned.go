package rawlog

// ThinnedErr is the Err of the not_sent record of a planned arrival that in-run adaptive scale
// thinned out (request-rate control below the plan's rate): like one past the plan's duration,
// it was never due, so analyze counts it neither as sent nor as failed.
const ThinnedErr = "not sent: thinned out by adaptive scale (request rate below the plan's)"
