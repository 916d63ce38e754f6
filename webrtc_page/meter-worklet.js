// Audio level meter: posts {rms, t_ms} for each 20 ms window (t_ms = AudioContext time at the window's end).
class Meter extends AudioWorkletProcessor {
  constructor() { super(); this.sum = 0; this.n = 0; this.win = Math.round(sampleRate * 0.02); }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch) {
      for (let i = 0; i < ch.length; i++) {
        this.sum += ch[i] * ch[i];
        if (++this.n === this.win) {
          this.port.postMessage({ rms: Math.sqrt(this.sum / this.n), t_ms: (currentTime + (i + 1) / sampleRate) * 1000 });
          this.sum = 0; this.n = 0;
        }
      }
    }
    return true;
  }
}
registerProcessor("meter", Meter);
