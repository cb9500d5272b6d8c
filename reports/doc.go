// Package reports turns a flow table into findings an engineer can act on:
// retransmissions and loss, congestion, cross-rail traffic, storage and
// other non-RDMA traffic on compute links, QP fan-out and capture health.
//
// Each report module is a small function in its own file that reads the
// Input (flows, the per-capture Collector, the topology) and returns
// findings; no module prints. Run runs them all and ranks the findings;
// the render subpackages write text, Markdown, JSON and HTML.
package reports
