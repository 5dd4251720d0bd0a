// scenario/record/'s face: a recording proxy in front of one server (proxy + capture wired once).
export { startRecording, bindRecording, type RecordingOptions, type Recording, type BoundRecording } from './recording.js';
