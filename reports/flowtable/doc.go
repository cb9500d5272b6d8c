// Package flowtable turns a flow table into what an engineer reads: rows for
// a terminal table, Markdown for a ticket, CSV for a spreadsheet, and JSON
// records (the `flows` array of `rocedump flows --format json` and of the
// report). It only formats: every number comes from package flows.
package flowtable
