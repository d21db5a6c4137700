import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LayerFilter, LayerMeter, parseVp8Descriptor } from '../../src/domains/voice/sfu/temporal-layers.ts';

/** A VP8 payload descriptor with a 15-bit picture ID and a temporal layer index (RFC 7741 §4.2), then one byte. */
function vp8(options: { start?: boolean; pictureId: number; tid: number; sync?: boolean; key?: boolean }): Buffer {
  return Buffer.from([
    0x80 | (options.start === false ? 0 : 0x10),
    0x80 | 0x20,
    0x80 | (options.pictureId >> 8),
    options.pictureId & 0xff,
    (options.tid << 6) | (options.sync ? 0x20 : 0),
    options.key ? 0x00 : 0x01,
  ]);
}

describe('VP8 temporal layers (docs/voice.md#layer-selection)', () => {
  it('reads the frame start, temporal layer, layer sync, picture ID and key frame of a payload descriptor', () => {
    const d = parseVp8Descriptor(vp8({ pictureId: 300, tid: 2, sync: true, key: true }));
    assert.deepEqual(d, {
      frameStart: true,
      temporalId: 2,
      layerSync: true,
      pictureId: { offset: 2, bits: 15 },
      keyFrame: true,
    });
    assert.equal(parseVp8Descriptor(vp8({ start: false, pictureId: 1, tid: 0 }))?.keyFrame, false);
    assert.equal(parseVp8Descriptor(Buffer.alloc(0)), undefined);
    assert.equal(parseVp8Descriptor(Buffer.from([0x80])), undefined, 'extension byte missing');
    assert.equal(parseVp8Descriptor(Buffer.from([0x10, 0x00]))?.temporalId, undefined, 'no extension: no layers');
  });

  it('weighs each layer over the window and picks the highest whose stream, with those below, fits', () => {
    const meter = new LayerMeter();
    // One second: layer 0 7,500 B (60 kbit/s), layer 1 4,500 B (36 kbit/s), layer 2 6,000 B (48 kbit/s).
    meter.add(0, 7500, 0);
    meter.add(1, 4500, 500);
    meter.add(2, 6000, 900);
    meter.add(0, 1, 1000); // the first packet after the window closes it
    assert.equal(meter.highestWithin(70_000, 1000), 0);
    assert.equal(meter.highestWithin(96_000, 1000), 1);
    // An empty layer 3 fits too: the subscriber gets every layer.
    assert.equal(meter.highestWithin(144_000, 1000), 3);
    assert.equal(meter.highestWithin(143_999, 1000), 1);
    assert.equal(meter.highestWithin(1, 1000), 0, 'layer 0 at least');
  });

  it('divides a window that lasted longer than a second by its real length', () => {
    const meter = new LayerMeter();
    // The bytes of a 1 s window of 60 + 36 + 24 kbit/s, but read over 1.5 s: 40 + 24 + 16 kbit/s.
    meter.add(0, 7500, 0);
    meter.add(1, 4500, 700);
    meter.add(2, 3000, 900);
    meter.add(0, 1, 1500);
    assert.equal(meter.highestWithin(65_000, 1500), 1, '40 + 24 kbit/s fit in 65 (divided by 1 s: 60 + 36 did not)');
    assert.equal(meter.highestWithin(80_000, 1500), 3);
    assert.equal(meter.highestWithin(50_000, 1500), 0);
  });

  it('drops the frames above the layer forwarded and keeps sequence numbers and picture IDs gapless', () => {
    const filter = new LayerFilter();
    const out: { seq: number; pictureId: number }[] = [];
    // Frames 0..7 in the pattern 0, 2, 1, 2, one packet each; the subscriber takes layer 0 and 1.
    for (let frame = 0; frame < 8; frame++) {
      const tid = [0, 2, 1, 2][frame % 4] ?? 0;
      const payload = vp8({ pictureId: 100 + frame, tid, key: frame === 0 });
      const descriptor = parseVp8Descriptor(payload);
      assert.ok(descriptor);
      const seq = filter.admit(descriptor, frame * 3000, 500 + frame, payload, 1);
      if (seq !== undefined) out.push({ seq, pictureId: ((payload[2] ?? 0) & 0x7f) * 256 + (payload[3] ?? 0) });
    }
    assert.deepEqual(out, [
      { seq: 500, pictureId: 100 },
      { seq: 501, pictureId: 101 },
      { seq: 502, pictureId: 102 },
      { seq: 503, pictureId: 103 },
    ]);
    assert.equal(filter.layer, 1);
  });

  it('goes up only at a layer-sync or key frame', () => {
    const filter = new LayerFilter();
    const admit = (frame: number, tid: number, max: number, flags: { sync?: boolean; key?: boolean } = {}) => {
      const payload = vp8({ pictureId: frame, tid, ...flags });
      const descriptor = parseVp8Descriptor(payload);
      assert.ok(descriptor);
      return filter.admit(descriptor, frame * 3000, frame, payload, max);
    };
    assert.notEqual(admit(0, 0, 0, { key: true }), undefined);
    assert.equal(admit(1, 2, 0), undefined, 'layer 2 above the limit');
    assert.equal(admit(2, 1, 2), undefined, 'the limit rose, but layer 1 without sync cannot start');
    assert.notEqual(admit(3, 1, 2, { sync: true }), undefined, 'a layer-sync frame of layer 1 starts it');
    assert.equal(filter.layer, 1);
    assert.notEqual(admit(4, 0, 2, { key: true }), undefined);
    assert.equal(filter.layer, 2, 'a key frame starts every layer up to the limit');
  });
});
