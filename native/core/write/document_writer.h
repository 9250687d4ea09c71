// An incremental writer of one document (a file): given the document's
// inputs (DocumentInfo) once, then fed batches of spans, then finished; after
// finish(), restart() begins a new self-standing document with the same
// inputs. PerfettoWriter and ChromeJsonWriter are the two; their headers say
// what a batch may be and what each writes.
#pragma once

#include <cstdint>
#include <string>

#include "write/document_info.h"
#include "record/tracer.h"

namespace hotspan {

class DocumentWriter {
 public:
  virtual ~DocumentWriter() = default;

  // `last`: no batch follows (the whole-snapshot writers pass one batch so).
  virtual void append(const Snapshot& batch, bool last) = 0;
  virtual void append(const FrozenSnapshot& batch, bool last) = 0;
  void append(const Snapshot& batch) { append(batch, false); }
  void append(const FrozenSnapshot& batch) { append(batch, false); }
  // The counts finish() writes (document_info.h), replacing the document's.
  virtual void set_counts(DocumentCounts counts) = 0;
  // The process the batches appended next were recorded in (DocumentInfo's
  // pid and process_name; until called, the DocumentInfo's own): one
  // document may hold several processes, each kept apart as the documents of
  // several processes joined into one are (Perfetto: each its own packet
  // sequence and track uuids; Chrome JSON: its pid on its events, its
  // process_name metadata on first sight). Their timeline ids are their own.
  // The document's counts go with its first process.
  virtual void set_process(uint32_t pid, std::string name) = 0;
  virtual void finish() = 0;
  virtual void restart() = 0;
};

// A whole document: one batch, then finish().
template <typename Writer, typename SnapshotT, typename Out>
void write_document(const SnapshotT& snapshot, const DocumentInfo& doc, Out& out) {
  Writer w(doc, out);
  w.append(snapshot, true);
  w.finish();
}

}  // namespace hotspan
