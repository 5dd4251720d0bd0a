// The command list. Each command is one thin file exporting a BbCommand;
// add a line here to register it.
import type { BbCommand } from '../command.js';
import { caCommand } from './ca.js';
import { captureCommand } from './capture.js';
import { recoverCommand } from './recover.js';
import { diffCommand } from './diff.js';
import { noiseCommand } from './noise.js';
import { knownCommand } from './known.js';
import { framesCommand } from './frames.js';
import { showCommand } from './show.js';
import { compareCommand } from './compare.js';
import { demoCommand } from './demo.js';

export const commands: BbCommand[] = [captureCommand, caCommand, recoverCommand, diffCommand, noiseCommand, knownCommand, framesCommand, showCommand, compareCommand, demoCommand];
