/** Bad task input an operator can fix (an unknown task, an end state that does not fit its layout). */
export class TaskInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskInputError';
  }
}
