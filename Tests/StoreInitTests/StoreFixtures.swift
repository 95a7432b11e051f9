import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin

/// A manifest with one `store.init` step, `store`, with these params.
func storeManifest(_ params: String) -> String {
  #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": \#(params) } ] }"#
}

/// Overwrites the start of the first page's b-tree (after the 100-byte file header) with
/// garbage: SQLite fails on the first read of the schema with "database disk image is
/// malformed".
func damageFirstPage(of url: URL) throws {
  let handle = try FileHandle(forWritingTo: url)
  defer { try? handle.close() }
  try handle.seek(toOffset: 100)
  try handle.write(contentsOf: Data(repeating: 0xFF, count: 8))
}

/// Overwrites the b-tree header of the file's last page with garbage: the schema still reads,
/// and only a check that walks the tables finds the damage.
func damageLastPage(of url: URL) throws {
  let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
  let handle = try FileHandle(forWritingTo: url)
  defer { try? handle.close() }
  try handle.seek(toOffset: UInt64(size - 4096))
  try handle.write(contentsOf: Data(repeating: 0xFF, count: 16))
}

/// The names in `folder`, sorted.
func names(in folder: ScratchFolder) throws -> [String] {
  try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
}

/// The `store` step's error of `report`.
func storeError(_ report: LaunchReport) -> String? {
  report.step("store")?.error
}
