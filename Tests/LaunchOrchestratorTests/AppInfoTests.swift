import Testing

@testable import LaunchOrchestrator

@Suite("AppInfo")
struct AppInfoTests {
  @Test func readsAVersionWithOrWithoutItsBuild() {
    #expect(AppInfo(parsing: "2.3.0") == AppInfo(version: "2.3.0"))
    #expect(AppInfo(parsing: "2.3.0+41") == AppInfo(version: "2.3.0", build: "41"))
    #expect(AppInfo(parsing: "1.2.0-beta.2") == AppInfo(version: "1.2.0-beta.2"))
    #expect(AppInfo(version: "2.3.0", build: "41").description == "2.3.0+41")
  }

  @Test func refusesWhatCannotBeAVersion() {
    for text in ["", "banana", "+41", "2.3.0+", "v2.3", "2.3 0", "1..0", "1.", "1.0-", "1.-0"] {
      #expect(AppInfo(parsing: text) == nil, "\(text)")
    }
  }
}
