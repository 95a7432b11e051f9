import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `store.init`: opens or creates the SQLite store and migrates it, in the same time whatever
/// its size; refuses files it did not create; recovers a damaged store by moving it aside
/// with its WAL (never deleting it) and creating a new one.
public struct StoreInitStep: StepPlugin {
  /// The kind name.
  public static let kind = "store.init"
  /// What the step does.
  public static let summary =
    "Opens or creates the SQLite store and applies its migrations (built-in books or music, or the app's folder of NNN_name.sql files); refuses files it did not create; moves a damaged store aside with its WAL and creates a new one."
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init(
      "path", .path, required: true,
      "The database file; relative to the data folder. Its folder must exist unless createFolders."
    ),
    .init(
      "schema", .oneOf(StoreSchema.all.map(\.name)), default: "books",
      "A built-in schema; leave it out when giving 'migrations'."),
    .init(
      "migrations", .path,
      "The app's own schema: a folder of NNN_name.sql files shipped with the manifest (relative to its folder), applied in order."
    ),
    .init(
      "readOnly", .boolean, default: "false", "Open for reading only: no migrations, no recovery."),
    .init(
      "create", .boolean, default: "true unless readOnly",
      "Create the store when the file does not exist."),
    .init(
      "createFolders", .boolean, default: "false",
      "Create the store's missing parent folders instead of failing."),
    .init(
      "adopt", .boolean, default: "false",
      "Add the schema to an existing database that has tables of its own and no version."),
    .init("busyTimeout", .duration, default: "5s", "How long to wait for another writer."),
    .init(
      "integrityCheck", .boolean, default: "false",
      "Run PRAGMA quick_check when opening: reads the whole store, so launch time grows with it; prefer a deferred store.check step."
    ),
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var path: String
    var schema: String?
    var migrations: String?
    var readOnly: Bool?
    var create: Bool?
    var createFolders: Bool?
    var adopt: Bool?
    var busyTimeout: DurationParameter?
    var integrityCheck: Bool?
    /// Where the manifest is, to read the migrations folder when it loads.
    var manifestDirectory: URL?

    private enum CodingKeys: String, CodingKey {
      case path, schema, migrations, readOnly, create, createFolders, adopt, busyTimeout
      case integrityCheck
    }

    /// Decodes the params, noting the manifest's folder.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      path = try container.decode(String.self, forKey: .path)
      schema = try container.decodeIfPresent(String.self, forKey: .schema)
      migrations = try container.decodeIfPresent(String.self, forKey: .migrations)
      readOnly = try container.decodeIfPresent(Bool.self, forKey: .readOnly)
      create = try container.decodeIfPresent(Bool.self, forKey: .create)
      createFolders = try container.decodeIfPresent(Bool.self, forKey: .createFolders)
      adopt = try container.decodeIfPresent(Bool.self, forKey: .adopt)
      busyTimeout = try container.decodeIfPresent(DurationParameter.self, forKey: .busyTimeout)
      integrityCheck = try container.decodeIfPresent(Bool.self, forKey: .integrityCheck)
      manifestDirectory = decoder.userInfo[.manifestDirectory] as? URL
    }
  }

  private let path: String
  private let schemaSource: SchemaSource
  private let readOnly: Bool
  private let create: Bool
  private let createFolders: Bool
  private let adopt: Bool
  private let busyTimeout: Duration
  private let integrityCheck: Bool

  /// A built-in schema, or an app's folder read when the manifest loaded or, without a
  /// manifest folder to resolve it against then, when the step runs.
  private enum SchemaSource: Sendable {
    case loaded(StoreSchema)
    case folder(String)
  }

  /// Checks the parameters, and reads and checks the migrations folder.
  public init(parameters: Parameters) throws {
    guard !parameters.path.isEmpty else { throw ParameterError("path", "'path' cannot be empty.") }
    path = parameters.path
    if let migrations = parameters.migrations {
      guard parameters.schema == nil else {
        throw ParameterError(
          "migrations", "give either 'schema' (a built-in schema) or 'migrations', not both.")
      }
      guard !migrations.isEmpty else {
        throw ParameterError("migrations", "'migrations' cannot be empty.")
      }
      if let directory = parameters.manifestDirectory {
        let folder = StepContext.resolve(migrations, against: directory)
        do {
          schemaSource = .loaded(try StoreSchema(folder: folder))
        } catch {
          throw ParameterError("migrations", error.message + ".")
        }
      } else {
        schemaSource = .folder(migrations)
      }
    } else {
      let name = parameters.schema ?? "books"
      guard let schema = StoreSchema.named(name) else {
        let names = StoreSchema.all.map(\.name)
        throw ParameterError(
          "schema",
          "unknown schema '\(name)'.\(Suggestions.didYouMean(name, in: names)) Use one of: \(names.joined(separator: ", ")), or give 'migrations', a folder of your own."
        )
      }
      schemaSource = .loaded(schema)
    }
    readOnly = parameters.readOnly ?? false
    create = parameters.create ?? !readOnly
    if readOnly && create {
      throw ParameterError(
        "create", "a read-only store cannot be created; drop 'create' or 'readOnly'.")
    }
    createFolders = parameters.createFolders ?? false
    adopt = parameters.adopt ?? false
    busyTimeout = parameters.busyTimeout?.duration ?? .seconds(5)
    integrityCheck = parameters.integrityCheck ?? false
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Opens, checks, recovers and migrates the store.
  public func run(_ context: StepContext) async throws -> StoreHandle {
    let schema: StoreSchema
    switch schemaSource {
    case .loaded(let loaded): schema = loaded
    case .folder(let folder): schema = try StoreSchema(folder: context.resolveResource(folder))
    }
    let opener = StoreOpener(
      url: context.resolve(path), schema: schema, readOnly: readOnly, create: create,
      createFolders: createFolders, adopt: adopt, busyTimeout: busyTimeout,
      integrityCheck: integrityCheck, context: context)
    return try opener.openStore()
  }
}
