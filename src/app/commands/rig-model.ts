import type { CliCommand } from '../command.js';

export const commands: CliCommand[] = [];
