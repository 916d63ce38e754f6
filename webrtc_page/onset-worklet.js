// The person's speech onset at the microphone, for a fast barge-in: posts {type: "onset", t_ms}
// when the level rises well above the room's noise floor and stays there for 30 ms, and
// {type: "offset", t_ms} after 150 ms back near the floor. Energy based, 10 ms windows:
// the floor follows the level down at once and up slowly (~3 dB/s), so a steady hum or
// tone becomes the floor instead of speech. It only decides that *something* began; the
// server's VAD and transcript confirm a barge-in or release it (appliance/voice/playout.py).
class Onset extends AudioWorkletProcessor {
  constructor() {
    super();
    this.win = Math.round(sampleRate * 0.01);
    this.sum = 0; this.n = 0;
    this.floor = -70;           // dBFS
    this.above = 0; this.below = 0; this.active = false;
  }
  window(db, tMs) {
    const threshold = Math.max(this.floor + 18, -50);
    if (!this.active) {
      this.above = db > threshold ? this.above + 1 : 0;
      if (this.above >= 3) { this.active = true; this.below = 0; this.port.postMessage({ type: "onset", t_ms: tMs - 30 }); }
    } else {
      this.below = db < this.floor + 9 ? this.below + 1 : 0;
      if (this.below >= 15) { this.active = false; this.above = 0; this.port.postMessage({ type: "offset", t_ms: tMs - 150 }); }
    }
    this.floor = db < this.floor ? db : this.floor + 0.03;
  }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch) {
      for (let i = 0; i < ch.length; i++) {
        this.sum += ch[i] * ch[i];
        if (++this.n === this.win) {
          this.window(10 * Math.log10(this.sum / this.n + 1e-12), (currentTime + (i + 1) / sampleRate) * 1000);
          this.sum = 0; this.n = 0;
        }
      }
    }
    return true;
  }
}
registerProcessor("onset", Onset);
