"""Photometric effects: what a cheap camera in room light does to a perfect composite.

Everything here changes pixels, never geometry (lateral chromatic aberration moves the red and blue channels by
at most about a pixel at the frame corners), so labels computed before these effects stay exact. The order follows
the physics and a webcam's image signal processor (ISP), because the order is what makes the artefacts look real:

1. light on the scene, in linear radiance: a lamp's hot spot or a window's gradient, lens vignetting, specular
   glare, the colour of the lamp or daylight;
2. optics: defocus, motion blur, lateral chromatic aberration;
3. sensor: auto exposure metering the finished image, clipping at full well, so highlights burn out;
4. ISP: white balance that only partly removes the lamp's cast, colour saturation, sensor noise (shot and read;
   luma fine, chroma blotchier at quarter resolution, as demosaicing leaves it; drawn after white balance, where
   the denoiser sees it), tone curve (gamma, S-curve, black level), chroma and luma noise reduction, then unsharp
   masking, which puts halos on edges and lifts the grain that is left;
5. encoder: JPEG exactly once, at the camera's quality. The frame `finish` returns is a `CameraFrame` that keeps
   those bytes, and `frame_jpeg` hands them to whoever stores the frame, so no frame is ever compressed twice.

The composite comes in as display (sRGB-like) values, because textures and card art are stored that way; it is
decoded with a 2.2 power, worked on in linear light and encoded again by the tone curve.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import cv2
import numpy as np

DISPLAY_GAMMA = 2.2
MID_GREY = 0.18  # linear mid grey: where noise is specified
AE_TARGET = (0.45, 0.06, 0.3, 0.6)  # output luma auto exposure aims at: mean, spread, limits (fractions of full scale)
AE_STEPS = 5
AE_GAIN_RANGE = (0.25, 4.0)  # how far auto exposure can push: a webcam's gain and shutter range in room light
LUMA_BGR = np.array([0.0722, 0.7152, 0.2126], np.float32)
# Approximate sRGB colours (8-bit, D65 white) of black-body light, after Mitchell Charity's table; only their ratios
# matter here. Room light spans warm tungsten and LED lamps (2600-3500 K) to daylight through a window (5000-7500 K).
BLACKBODY_RGB = {
    2500: (255, 161, 72),
    3000: (255, 180, 107),
    3500: (255, 196, 137),
    4000: (255, 209, 163),
    4500: (255, 219, 186),
    5000: (255, 228, 206),
    5500: (255, 236, 224),
    6000: (255, 243, 239),
    6500: (255, 249, 253),
    7000: (245, 243, 255),
    7500: (235, 238, 255),
}
READ_NOISE_FLOOR = 0.01  # linear signal level at which read noise equals shot noise
DEMOSAIC_SIGMA = 0.5  # px: how far demosaicing spreads one photosite's noise
TONE_TABLE_SIZE = 4096
SHARPEN_CORING = 2.0 / 255  # luma detail below this is noise to a webcam sharpener
JPEG_SUBSAMPLING = {"420": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420, "422": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422}


@dataclass(frozen=True)
class EffectParams:
    """Every random photometric choice for one frame; `none()` gives a clean render for label tests."""

    light_gradient: tuple[float, float, float]  # gain slope in x, slope in y, vignette strength
    exposure_target: float  # mean output luma (0-1) auto exposure aims at; 0 = no auto exposure (gain 1)
    illuminant_k: float  # colour temperature of the room light in kelvin; 0 = neutral white
    awb_strength: float  # share of the illuminant's cast that auto white balance removes (1 = all)
    white_balance: tuple[float, float, float]  # BGR gains: the white balance's own error on top
    saturation: float  # ISP colour gain around grey
    gamma: float  # >1 brightens mid-tones on top of the display encoding
    tone_contrast: float  # S-curve strength, 0 = plain gamma
    black_level: float  # display level mapped to black; negative lifts the blacks (a hazy lens)
    shadow_strength: float  # 0 = no shadows
    shadow_offset: tuple[float, float]  # light direction: shadow shift per unit of height, pixels
    glare: tuple[float, float, float, float]  # centre x, y (fraction of frame), radius (fraction of width), strength
    defocus_sigma: float
    motion: tuple[float, float]  # length in pixels, angle in degrees
    chromatic_aberration: float  # red magnified and blue shrunk by this fraction about the frame centre
    noise_sigma: float  # luma noise at mid grey, display 0-255 units, before noise reduction
    chroma_noise: float  # chroma noise relative to luma noise
    denoise: tuple[float, float]  # Gaussian sigma (px) of luma and of chroma noise reduction
    sharpen: tuple[float, float]  # unsharp-mask amount and radius (px)
    jpeg_quality: int  # 0 = no JPEG
    jpeg_subsampling: str = "420"  # chroma subsampling, a key of JPEG_SUBSAMPLING
    lamp: tuple[float, float, float, float] = (0.5, 0.5, 1.0, 0.0)  # x, y, height (frame units), share of light

    @classmethod
    def none(cls) -> EffectParams:
        return cls(
            light_gradient=(0.0, 0.0, 0.0),
            exposure_target=0.0,
            illuminant_k=0.0,
            awb_strength=1.0,
            white_balance=(1.0, 1.0, 1.0),
            saturation=1.0,
            gamma=1.0,
            tone_contrast=0.0,
            black_level=0.0,
            shadow_strength=0.0,
            shadow_offset=(0.0, 0.0),
            glare=(0.5, 0.5, 0.1, 0.0),
            defocus_sigma=0.0,
            motion=(0.0, 0.0),
            chromatic_aberration=0.0,
            noise_sigma=0.0,
            chroma_noise=0.0,
            denoise=(0.0, 0.0),
            sharpen=(0.0, 0.0),
            jpeg_quality=0,
        )

    def without_shadows(self) -> EffectParams:
        return replace(self, shadow_strength=0.0)


def random_effects(rng: np.random.Generator) -> EffectParams:
    """Ranges follow what webcams and phones on a stand deliver indoors:

    - light: the lamp is warm (2600-3500 K) in about half the frames, daylight (5000-7500 K) in a third, LED or
      mixed in between; auto white balance removes 70-100 % of the cast, since webcam tuning keeps some warmth
      under tungsten on purpose, and errs by a few per cent per channel;
    - exposure: auto exposure aims the centre-weighted mean output luma at 45 % of full scale, as UVC webcams
      do, give or take 6 % (metering is fooled by white cards and dark cloths), within the gain range it has;
    - tone: gamma 0.85-1.15 and an S-curve of 0-0.6 cover flat to punchy camera profiles; black level from
      slightly lifted (lens haze) to crushed; saturation 0.8-1.25 around the ISP default;
    - sensor: noise 1-5 grey levels at mid grey before noise reduction (a small sensor in room light), divided
      by the square root of the 1-4 frames temporal noise reduction averages while nothing moves; chroma noise
      0.3-1 times as strong; spatial noise reduction always on, luma 0.3-1 px, chroma 1-3 px (colour is smoothed
      far more than detail);
    - shadows darken 15-60 % (soft room light to a hard lamp);
    - a lamp over the table lights half the frames, 40-90 % of their light, from anywhere over the frame or
      just beyond it, 0.3-1.5 frame widths up (a desk lamp close by to a ceiling light far above); the rest is
      diffuse light with a gentle gradient from a window;
    - optics: vignetting up to 45 % at the corners, lateral chromatic aberration up to 0.15 % (about a pixel at
      the corners of a 720p frame), defocus in about half the frames, motion blur in a fifth;
    - sharpening: every webcam sharpens, amount 0.2-1.5 at radius 0.8-1.8 px;
    - JPEG: quality 70-95 as webcams stream MJPEG, chroma 4:2:0 mostly, 4:2:2 as many MJPEG webcams send.

    Blur and glare are present only in a minority of frames, as in a real session where most frames are taken
    while nothing moves."""
    angle = rng.uniform(0, 2 * np.pi)
    shadow_len = rng.uniform(0.5, 2.5)
    glare_on = rng.random() < 0.35
    moving = rng.random() < 0.2
    light = rng.choice(3, p=[0.45, 0.2, 0.35])
    kelvin = rng.uniform(*((2600, 3500), (3500, 5000), (5000, 7500))[light])
    return EffectParams(
        light_gradient=(float(rng.normal(0, 0.25)), float(rng.normal(0, 0.25)), float(rng.uniform(0.0, 0.45))),
        exposure_target=float(np.clip(rng.normal(*AE_TARGET[:2]), *AE_TARGET[2:])),
        illuminant_k=float(kelvin),
        awb_strength=float(rng.uniform(0.7, 1.0)),
        white_balance=tuple(float(g) for g in rng.normal(1.0, 0.03, 3)),
        saturation=float(rng.uniform(0.8, 1.25)),
        gamma=float(rng.uniform(0.85, 1.15)),
        tone_contrast=float(rng.uniform(0.0, 0.6)),
        black_level=float(rng.uniform(-0.02, 0.05)),
        shadow_strength=float(rng.uniform(0.15, 0.6)),
        shadow_offset=(float(np.cos(angle) * shadow_len), float(np.sin(angle) * shadow_len)),
        glare=(
            float(rng.uniform(0.1, 0.9)),
            float(rng.uniform(0.1, 0.9)),
            float(rng.uniform(0.05, 0.2)),
            float(rng.uniform(0.3, 0.9)) if glare_on else 0.0,
        ),
        defocus_sigma=float(rng.choice([0.0, rng.uniform(0.3, 1.0), rng.uniform(1.0, 2.2)], p=[0.45, 0.4, 0.15])),
        motion=(float(rng.uniform(3, 14)) if moving else 0.0, float(rng.uniform(0, 180))),
        chromatic_aberration=float(rng.uniform(0.0, 0.0015)) if rng.random() < 0.7 else 0.0,
        noise_sigma=float(rng.uniform(1.0, 5.0) / (1.0 if moving else np.sqrt(rng.uniform(1.0, 4.0)))),
        chroma_noise=float(rng.uniform(0.3, 1.0)),
        denoise=(float(rng.uniform(0.3, 1.0)), float(rng.uniform(1.0, 3.0))),
        sharpen=(float(rng.uniform(0.2, 1.5)), float(rng.uniform(0.8, 1.8))),
        jpeg_quality=int(rng.integers(70, 96)),
        jpeg_subsampling="420" if rng.random() < 0.7 else "422",
        lamp=(
            float(rng.uniform(-0.3, 1.3)),
            float(rng.uniform(-0.3, 1.3)),
            float(rng.uniform(0.3, 1.5)),
            float(rng.uniform(0.4, 0.9)) if rng.random() < 0.5 else 0.0,
        ),
    )


# ----------------------------------------------------------------------------------------------------- shadows


def cast_shadow(
    canvas: np.ndarray,
    alpha: np.ndarray,
    origin: tuple[int, int],
    shift: tuple[float, float],
    blur: float,
    strength: float,
) -> None:
    """Darken the canvas under an object's soft, shifted silhouette (in place) before the object is pasted; a card
    lying flat casts a thin rim, a hand held above the table a wide, soft, displaced one."""
    if strength <= 0.0:
        return
    pad = int(np.ceil(3 * blur + max(abs(shift[0]), abs(shift[1])))) + 1
    padded = cv2.copyMakeBorder(alpha, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    moved = cv2.warpAffine(padded, np.float32([[1, 0, shift[0]], [0, 1, shift[1]]]), padded.shape[::-1])
    if blur > 0:
        moved = cv2.GaussianBlur(moved, (0, 0), blur)
    region = _clip_region(canvas.shape, origin[0] - pad, origin[1] - pad, moved.shape[1], moved.shape[0])
    if region is None:
        return
    (cy0, cy1, cx0, cx1), (py0, py1, px0, px1) = region
    canvas[cy0:cy1, cx0:cx1] *= (1.0 - strength * moved[py0:py1, px0:px1])[..., None]


def _clip_region(
    shape: tuple[int, ...], x0: int, y0: int, w: int, h: int
) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None:
    """Canvas and patch slices where a patch placed at (x0, y0) overlaps the canvas; None if it does not."""
    cx0, cy0 = max(x0, 0), max(y0, 0)
    cx1, cy1 = min(x0 + w, shape[1]), min(y0 + h, shape[0])
    if cx0 >= cx1 or cy0 >= cy1:
        return None
    return (cy0, cy1, cx0, cx1), (cy0 - y0, cy1 - y0, cx0 - x0, cx1 - x0)


# ----------------------------------------------------------------------------------------------------- light


def lighting_field(params: EffectParams, width: int, height: int) -> np.ndarray:
    """Smooth gain field built on a coarse grid (light varies slowly, so 32 x 18 samples resized up cost nothing):
    a gradient (window light), lens vignetting, and a lamp above the table, whose light falls off with the cube of
    the cosine of its angle (inverse square times Lambert), giving the hot spot and dark corners of a desk lamp.
    The lamp's falloff is taken across the image plane rather than the tilted table: close enough for a field
    this smooth."""
    gx, gy, vignette = params.light_gradient
    xs = np.linspace(-1, 1, 32, dtype=np.float32)[None, :]
    ys = np.linspace(-1, 1, 18, dtype=np.float32)[:, None]
    field = (1.0 + 0.5 * gx * xs + 0.5 * gy * ys) * (1.0 - vignette * 0.5 * (xs**2 + ys**2))
    lx, ly, lamp_height, share = params.lamp
    if share > 0:
        aspect = height / width
        distance2 = ((xs + 1) / 2 - lx) ** 2 + (((ys + 1) / 2 - ly) * aspect) ** 2
        falloff = (lamp_height**2 / (distance2 + lamp_height**2)) ** 1.5
        field = field * ((1.0 - share) + share * falloff / float(falloff.max()))
    return cv2.resize(np.clip(field, 0.02, 3.0), (width, height), interpolation=cv2.INTER_LINEAR)


def add_glare(linear: np.ndarray, glossy: np.ndarray, params: EffectParams, illuminant: np.ndarray) -> None:
    """Specular highlight of the lamp on glossy card stock (in place, linear light): a soft blob of the lamp's
    own colour that can exceed the sensor's range, so its core burns out to white after exposure."""
    cx, cy, radius, strength = params.glare
    if strength <= 0.0:
        return
    h, w = linear.shape[:2]
    sigma = radius * w
    x0, x1 = int(max(cx * w - 3 * sigma, 0)), int(min(cx * w + 3 * sigma, w))
    y0, y1 = int(max(cy * h - 3 * sigma, 0)), int(min(cy * h + 3 * sigma, h))
    if x0 >= x1 or y0 >= y1:
        return
    xs = (np.arange(x0, x1, dtype=np.float32) - cx * w)[None, :]
    ys = (np.arange(y0, y1, dtype=np.float32) - cy * h)[:, None]
    blob = 1.5 * strength * np.exp(-(xs**2 + ys**2) / (2 * sigma**2)) * glossy[y0:y1, x0:x1]
    linear[y0:y1, x0:x1] += blob[..., None] * illuminant


def illuminant_gains(kelvin: float) -> np.ndarray:
    """BGR gains of light at `kelvin` relative to neutral white, at equal luminance (exposure is auto exposure's
    job); 0 means neutral. Interpolated in mired, the scale on which colour temperature differences look even."""
    if kelvin <= 0:
        return np.ones(3, np.float32)
    temps = np.array(sorted(BLACKBODY_RGB), float)
    table = np.array([BLACKBODY_RGB[int(t)] for t in temps], float)[:, ::-1] / 255.0
    mired = 1e6 / np.clip(kelvin, temps[0], temps[-1])
    display = np.array([np.interp(mired, 1e6 / temps[::-1], table[::-1, c]) for c in range(3)])
    gains = (display**DISPLAY_GAMMA).astype(np.float32)
    return gains / float(gains @ LUMA_BGR)


def auto_exposure_gain(linear: np.ndarray, params: EffectParams, colour: np.ndarray) -> float:
    """Centre-weighted average metering of the output luma, as webcam firmware does (its statistics come from
    the end of the ISP): the gain that brings the weighted mean luma of the finished image to the target, limited
    to the camera's gain range. A few steps of the control loop, each running a 64 x 36 thumbnail through the
    same colour matrix and tone curve, stand for the frames a real camera takes to settle; clipped highlights pull
    the gain as they do in a real loop."""
    if params.exposure_target <= 0:
        return 1.0
    small = np.clip(cv2.resize(linear, (64, 36), interpolation=cv2.INTER_AREA), 0.0, None)
    ys, xs = np.mgrid[-1:1:36j, -1:1:64j]
    weight = np.exp(-(xs**2 + ys**2) / (2 * 0.6**2)).astype(np.float32)
    weight /= weight.sum()
    gain = 1.0
    for _ in range(AE_STEPS):
        exposed = np.clip(cv2.transform(np.clip(small * np.float32(gain), 0.0, 1.0), colour), 0.0, 1.0)
        display = tone_curve(exposed ** np.float32(1.0 / DISPLAY_GAMMA), params)
        metered = float((luminance(display) * weight).sum())
        gain = float(np.clip(gain * (params.exposure_target / max(metered, 1e-3)) ** DISPLAY_GAMMA, *AE_GAIN_RANGE))
    return gain


# ----------------------------------------------------------------------------------------------------- optics


def blur(image: np.ndarray, params: EffectParams) -> np.ndarray:
    """Defocus and motion blur, applied to linear light because that is what a lens and a moving exposure mix;
    blurring display values would darken bright edges."""
    if params.defocus_sigma > 0:
        image = cv2.GaussianBlur(image, (0, 0), params.defocus_sigma)
    length, angle = params.motion
    if length >= 2:
        size = int(np.ceil(length)) | 1
        kernel = np.zeros((size, size), np.float32)
        kernel[size // 2, :] = 1.0
        rot = cv2.getRotationMatrix2D((size / 2 - 0.5, size / 2 - 0.5), angle, 1.0)
        kernel = cv2.warpAffine(kernel, rot, (size, size))
        image = cv2.filter2D(image, -1, kernel / max(float(kernel.sum()), 1e-6))
    return image


def chromatic_aberration(image: np.ndarray, amount: float) -> np.ndarray:
    """Lateral chromatic aberration: the lens magnifies red slightly more and blue slightly less than green, so
    edges towards the corners get colour fringes, none at the centre."""
    if amount <= 0:
        return image
    h, w = image.shape[:2]
    channels = list(cv2.split(image))
    for channel, scale in ((2, 1.0 + amount), (0, 1.0 - amount)):
        matrix = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), 0.0, scale)
        channels[channel] = cv2.warpAffine(
            channels[channel], matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
        )
    return cv2.merge(channels)


# ----------------------------------------------------------------------------------------------------- sensor


def noise_field(shape: tuple[int, int], seed: int, chroma_ratio: float, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """BGR sensor noise of standard deviation `scale` (a number or a per-pixel map): luma per pixel, slightly
    correlated by demosaicing; chroma drawn at a quarter of the resolution and upsampled, because after
    demosaicing and chroma smoothing colour noise shows as soft blotches while luma noise stays fine grain."""
    h, w = shape
    rng = np.random.default_rng(seed)
    luma = cv2.GaussianBlur(rng.standard_normal((h, w), dtype=np.float32), (0, 0), DEMOSAIC_SIGMA)
    luma *= np.float32(1.0 / _gaussian_gain(DEMOSAIC_SIGMA)) * scale
    if chroma_ratio <= 0:
        return cv2.merge([luma, luma, luma])
    small = rng.standard_normal(((h + 3) // 4, (w + 3) // 4, 2), dtype=np.float32) * np.float32(chroma_ratio)
    cb, cr = (c * scale for c in cv2.split(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)))
    blue = cv2.scaleAdd(cb, 1.772, luma)  # YCbCr to BGR: chroma moves blue and red against green
    green = cv2.scaleAdd(cr, -0.714, cv2.scaleAdd(cb, -0.344, luma))
    red = cv2.scaleAdd(cr, 1.402, luma)
    return cv2.merge([blue, green, red])


def _gaussian_gain(sigma: float) -> float:
    """How much a Gaussian blur of white noise lowers its standard deviation: the 2-D kernel's L2 norm, which
    for a separable kernel is the 1-D kernel's sum of squares."""
    size = 2 * int(np.ceil(4 * sigma)) + 1  # OpenCV's own kernel size for float images
    kernel = cv2.getGaussianKernel(size, sigma).ravel()
    return float(np.sum(kernel**2))


def luminance(image: np.ndarray) -> np.ndarray:
    return cv2.transform(image, LUMA_BGR[None, :])


def add_sensor_noise(linear: np.ndarray, params: EffectParams, seed: int) -> np.ndarray:
    """Shot noise (variance grows with the signal) over a read-noise floor, in linear light, clipped to the
    sensor's range. `noise_sigma` is set in display units at mid grey, where people judge noise, and converted
    through the display curve's slope there. Drawn after white balance, where the ISP's noise reduction sees it;
    the raw blue channel's extra noise under warm light is left out. The scale follows luminance (one channel
    instead of three: the difference is invisible and it is three times cheaper)."""
    if params.noise_sigma <= 0:
        return np.clip(linear, 0.0, 1.0)
    slope = (1.0 / DISPLAY_GAMMA) * MID_GREY ** (1.0 / DISPLAY_GAMMA - 1.0)
    sigma_mid = params.noise_sigma / 255.0 / slope
    scale = cv2.sqrt(np.clip(luminance(linear), 0.0, 1.0) + np.float32(READ_NOISE_FLOOR))
    scale *= np.float32(sigma_mid / np.sqrt(MID_GREY + READ_NOISE_FLOOR))
    noisy = linear + noise_field(linear.shape[:2], seed, params.chroma_noise, scale)
    return np.clip(noisy, 0.0, 1.0, out=noisy)


def add_noise(image: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """Sensor-like noise added to a finished display image (0-255): for per-frame noise over one rendered video
    still, where the full pipeline has already run once."""
    scale = np.float32(sigma) * (0.5 + cv2.sqrt(np.clip(luminance(image), 0, 255) / np.float32(255.0)))
    return image + noise_field(image.shape[:2], seed, 1.0, scale)


# ----------------------------------------------------------------------------------------------------- ISP


def colour_matrix(params: EffectParams, illuminant: np.ndarray) -> np.ndarray:
    """White balance (removing `awb_strength` of the illuminant's cast, with its own error) and saturation around
    grey as one 3x3 BGR matrix, the way an ISP applies its colour correction."""
    white = illuminant ** np.float32(-params.awb_strength) * np.array(params.white_balance, np.float32)
    s = np.float32(params.saturation)
    saturation = s * np.eye(3, dtype=np.float32) + (1 - s) * np.ones((3, 1), np.float32) * LUMA_BGR[None, :]
    return (saturation @ np.diag(white)).astype(np.float32)


def tone_curve(display: np.ndarray, params: EffectParams) -> np.ndarray:
    """Camera tone curve on display values in 0-1: gamma tweak, S-curve (smoothstep blend: steeper mid-tones,
    soft shoulder and toe) and black level."""
    out = np.clip(display, 0.0, 1.0)
    if params.gamma != 1.0:
        out = out ** np.float32(1.0 / params.gamma)
    if params.tone_contrast > 0:
        out = out + np.float32(params.tone_contrast) * (out * out * (3.0 - 2.0 * out) - out)
    if params.black_level != 0.0:
        out = (out - np.float32(params.black_level)) / np.float32(1.0 - params.black_level)
    return out


def tone_table(params: EffectParams) -> np.ndarray:
    """The whole linear-to-display response (display encoding plus `tone_curve`) tabulated over sqrt(linear), as
    ISPs hold their gamma in a table; square-root steps keep the shadows, where the curve is steepest, smooth
    (under a tenth of an output level per step)."""
    root = np.linspace(0.0, 1.0, TONE_TABLE_SIZE, dtype=np.float32)
    return tone_curve((root * root) ** np.float32(1.0 / DISPLAY_GAMMA), params).astype(np.float32)


def apply_tone(linear: np.ndarray, params: EffectParams) -> np.ndarray:
    index = cv2.sqrt(np.clip(linear, 0.0, 1.0)) * np.float32(TONE_TABLE_SIZE - 1) + np.float32(0.5)
    return np.take(tone_table(params), index.astype(np.uint16))


def noise_reduce_and_sharpen(display: np.ndarray, params: EffectParams) -> np.ndarray:
    """In YCrCb as an ISP does it: smooth chroma hard and luma lightly, then unsharp-mask luma, which draws
    halos along edges. Detail below a small threshold is left alone (coring), as webcam sharpeners do so as not
    to sharpen the noise; grain above it is lifted with the edges."""
    (luma_nr, chroma_nr), (amount, radius) = params.denoise, params.sharpen
    if luma_nr <= 0 and chroma_nr <= 0 and amount <= 0:
        return display
    luma, cr, cb = cv2.split(cv2.cvtColor(np.clip(display, 0.0, 1.0), cv2.COLOR_BGR2YCrCb))
    if chroma_nr > 0:
        cr, cb = cv2.GaussianBlur(cr, (0, 0), chroma_nr), cv2.GaussianBlur(cb, (0, 0), chroma_nr)
    if luma_nr > 0:
        luma = cv2.GaussianBlur(luma, (0, 0), luma_nr)
    if amount > 0 and radius > 0:
        detail = luma - cv2.GaussianBlur(luma, (0, 0), radius)
        cored = np.sign(detail) * np.clip(np.abs(detail) - np.float32(SHARPEN_CORING), 0.0, None)
        luma = cv2.scaleAdd(cored, amount, luma)
    return cv2.cvtColor(cv2.merge([luma, cr, cb]), cv2.COLOR_YCrCb2BGR)


# ----------------------------------------------------------------------------------------------------- encoder


class CameraFrame(np.ndarray):
    """A uint8 frame that keeps the JPEG bytes it was decoded from, so the frame is stored as those very bytes
    instead of being compressed a second time. Any array derived from it (copy, view, arithmetic) starts without
    bytes, and `frame_jpeg` checks a checksum, so a frame changed in place after decoding is never stored as the
    stale bytes."""

    jpeg: bytes | None
    checksum: int

    def __array_finalize__(self, obj: np.ndarray | None) -> None:
        self.jpeg = None
        self.checksum = -1

    def __reduce__(self) -> tuple:
        rebuild, args, state = super().__reduce__()
        return rebuild, args, (state, self.jpeg, self.checksum)

    def __setstate__(self, state: tuple) -> None:
        array_state, self.jpeg, self.checksum = state
        super().__setstate__(array_state)


def _checksum(frame: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(frame).data)


def encode_jpeg(frame: np.ndarray, quality: int, subsampling: str = "420") -> bytes:
    if subsampling not in JPEG_SUBSAMPLING:
        raise ValueError(f"jpeg_subsampling must be one of {sorted(JPEG_SUBSAMPLING)}, not '{subsampling}'")
    params = [cv2.IMWRITE_JPEG_QUALITY, int(quality), cv2.IMWRITE_JPEG_SAMPLING_FACTOR, JPEG_SUBSAMPLING[subsampling]]
    ok, data = cv2.imencode(".jpg", frame, params)
    if not ok:
        raise ValueError(f"JPEG encoding failed for a frame of shape {frame.shape} at quality {quality}")
    return data.tobytes()


def camera_jpeg(frame: np.ndarray, quality: int, subsampling: str = "420") -> CameraFrame:
    """Compress once, the way the camera's encoder does, and return the decoded frame holding its bytes."""
    data = encode_jpeg(frame, quality, subsampling)
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).view(CameraFrame)
    decoded.jpeg, decoded.checksum = data, _checksum(decoded)
    return decoded


def frame_jpeg(frame: np.ndarray, fallback_quality: int) -> bytes:
    """The JPEG file for a frame: the camera's own bytes when the frame still is what they decode to, else (a
    frame rendered with JPEG off, or changed since) one fresh encoding at `fallback_quality`."""
    jpeg = getattr(frame, "jpeg", None)
    if jpeg is not None and getattr(frame, "checksum", -1) == _checksum(frame):
        return jpeg
    return encode_jpeg(np.asarray(frame), fallback_quality)


# ----------------------------------------------------------------------------------------------------- pipeline


def finish(image: np.ndarray, glossy: np.ndarray, params: EffectParams, seed: int) -> np.ndarray:
    """Float BGR composite (display values 0-255) to the uint8 frame a camera would deliver; a `CameraFrame`
    carrying its JPEG bytes when the params compress."""
    if params == EffectParams.none():
        return np.clip(image + 0.5, 0, 255).astype(np.uint8)
    h, w = image.shape[:2]
    illuminant = illuminant_gains(params.illuminant_k)
    light = lighting_field(params, w, h)[..., None] * (illuminant * np.float32(255.0**-DISPLAY_GAMMA))
    # display to linear (the 1/255 scale rides in `light`); a shading undershoot below 0 would be NaN under pow
    linear = cv2.pow(np.maximum(image, np.float32(0.0)), DISPLAY_GAMMA)
    linear *= light
    add_glare(linear, glossy, params, illuminant)
    linear = chromatic_aberration(blur(linear, params), params.chromatic_aberration)
    colour = colour_matrix(params, illuminant)
    linear *= np.float32(auto_exposure_gain(linear, params, colour))
    np.clip(linear, 0.0, 1.0, out=linear)  # full well: highlights burn out here, before white balance
    linear = add_sensor_noise(cv2.transform(linear, colour), params, seed)
    display = noise_reduce_and_sharpen(apply_tone(linear, params), params)
    frame = cv2.convertScaleAbs(np.clip(display, 0.0, 1.0), alpha=255.0)  # rounds; nothing negative is left
    if params.jpeg_quality > 0:
        return camera_jpeg(frame, params.jpeg_quality, params.jpeg_subsampling)
    return frame
