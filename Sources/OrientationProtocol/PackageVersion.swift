/// The package's version, in one place for every program of the package: `orientd --version`,
/// `orientctl --version`, the daemon's `server` name in `hello` and the manual pages. A native
/// Debian package: `debian/changelog` carries the same number, and `make package-test` fails when
/// they differ (the Makefile reads it from this line).
public let orientdPackageVersion = "0.2.0"
