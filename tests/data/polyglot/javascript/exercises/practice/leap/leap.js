export const isLeap = () => {
  throw new Error('Remove this statement and implement this function');
};
