/**
 * The camera contract, beside the Rig: a camera is a stream of frames, each stamped when it
 * arrived at the station, with counters that say how healthy the stream is. Implementations live
 * in drivers/cameras (V4L2 and ffmpeg testsrc through an ffmpeg subprocess), the emulated cell and
 * the sim (rendered). The recorder writes frames as the camera gives them (no re-encoding); the
 * rollout's CameraSource decodes the latest frame of each camera for a policy.
 *
 * Time base: `arrivalS` is on the same clock as the rig's state (`RigState.timeS`), so a recorder
 * can put joint states and images on one time line.
 */

/** How a frame's bytes are encoded. `jpeg`: one JPEG image (MJPEG cameras); `rgb8`: packed RGB, row-major. */
export type FrameFormat = 'jpeg' | 'rgb8';

export interface CameraFrame {
  /** The camera's name as the policy knows it (e.g. cam_high). */
  readonly camera: string;
  /** 0-based count of frames this camera has delivered since open (gaps in it are dropped frames). */
  readonly seq: number;
  /** Station clock time (s) when the frame's last byte arrived. */
  readonly arrivalS: number;
  /**
   * Station clock time (s) of the instant the image shows, when the camera knows it (rendered
   * cameras: the world snapshot's time; arrivalS − capturedS is their render-and-encode latency).
   * Absent for hardware cameras, whose exposure time the station cannot see.
   */
  readonly capturedS?: number;
  readonly format: FrameFormat;
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

export interface CameraCounters {
  /** Frames delivered to listeners. */
  readonly received: number;
  /** Frames the camera produced that never reached a listener (device drops, backpressure). */
  readonly dropped: number;
  /** Frames that arrived more than 1.5 nominal periods after the previous one. */
  readonly late: number;
  /** Longest time between two consecutive arrivals (s); 0 before the second frame. */
  readonly longestGapS: number;
}

/**
 * Where a camera is in its life. `lost`: it was streaming and stopped (unplugged, process died,
 * no frame for a while) — an episode goes on without it, and says when it was lost.
 */
export type CameraStatus = 'closed' | 'opening' | 'streaming' | 'lost';

export interface CameraInfo {
  readonly name: string;
  /** What the camera is (e.g. 'v4l2 /dev/video0', 'ffmpeg testsrc', 'emulated cell renderer'). */
  readonly source: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly format: FrameFormat;
}

export interface Camera {
  readonly info: CameraInfo;
  /** Starts the stream; resolves on the first frame, rejects with an operator-readable error. */
  open(): Promise<void>;
  readonly status: CameraStatus;
  /** Why the camera is lost, in words (undefined unless status is 'lost'). */
  readonly lostReason: string | undefined;
  /** The newest frame, if any. */
  latest(): CameraFrame | undefined;
  /** Calls `listener` for every frame as it arrives; returns the unsubscribe function. */
  onFrame(listener: (frame: CameraFrame) => void): () => void;
  /** Calls `listener` once when the camera is lost (the episode records it as an event). */
  onLost(listener: (reason: string, atS: number) => void): () => void;
  counters(): CameraCounters;
  /** Stops the stream and releases the device; safe to call twice. */
  close(): Promise<void>;
}
