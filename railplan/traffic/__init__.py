"""Traffic on a Design: routing and ECMP hashing, flow sets, max-min sharing, collision reports."""
