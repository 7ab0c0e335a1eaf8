/// Which device orientation a convertible's interface follows (docs/convertibles.md).
///
/// In laptop mode the display's accelerometer tilts with the lid, not with the person: a laptop on
/// a sofa or a lap would turn its screen. So the interface keeps the display's natural orientation
/// (portrait in orientd's terms: the display frame upright, iio-sensor-proxy's `normal`), as the
/// keyboard does. In tablet mode, and when the mode is unknown (a device with one accelerometer),
/// it follows the display sensor; tent mode (folded past flat, standing on the two edges) reads
/// portraitUpsideDown there, so the interface turns 180°, and stand mode reads upright.
public enum ConvertibleRotation {
    public static func followedOrientation(
        device: DeviceOrientation, mode: DeviceMode?, laptopKeepsNormal: Bool
    ) -> DeviceOrientation {
        guard laptopKeepsNormal, mode == .laptop else { return device }
        return .portrait
    }
}
